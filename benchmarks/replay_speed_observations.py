#!/usr/bin/env python3
"""Replays the steps `flashps bench edit` fed its speed estimate (`speed_observations` in its JSON)
through two estimators and counts the steps each predicts within 10%, before seeing them.

An offline emulation of engine/speed_estimator.{h,cpp}, for choosing its model on recorded runs:
  shared-fit  one fit of all steps, a drift factor per kind of step (the estimator until 2026-11-27);
  kind-fit    a fit per kind of step, one drift factor shared by all (the estimator since).
Only per-block compute is replayed (the loads and the plan are not): that is where the two differ.

    python3 benchmarks/replay_speed_observations.py benchmarks/bench_edit_predicted*.json
"""
import json
import math
import sys

# The order bench edit runs its configurations in: six warm-up runs, full, then kv and hidden
# at each row's mask ratio. The JSON records FLOPs and seconds per block, not the kind.
KINDS = ["kv", "hidden"] * 3 + ["full"] + ["kv", "hidden"] * 6
DECAY, DRIFT_WEIGHT, KIND_FIT_SPAN = 0.9, 0.5, 1.5


class DecayingFit:
    """Least squares over relative errors with exponentially decaying weights."""

    def __init__(self):
        self.w = self.x = self.y = self.xx = self.xy = 0.0
        self.min_x = self.max_x = 0.0
        self.count = 0

    def add(self, x, y):
        weight = 1 / (y * y)
        self.w = self.w * DECAY + weight
        self.x = self.x * DECAY + weight * x
        self.y = self.y * DECAY + weight * y
        self.xx = self.xx * DECAY + weight * x * x
        self.xy = self.xy * DECAY + weight * x * y
        self.min_x = min(self.min_x, x) if self.count else x
        self.max_x = max(self.max_x, x) if self.count else x
        self.count += 1

    def solve(self, span=1.1):
        if self.count < 2 or self.max_x < span * self.min_x:
            return None
        mean_x, mean_y = self.x / self.w, self.y / self.w
        sxx, sxy = self.xx / self.w - mean_x**2, self.xy / self.w - mean_x * mean_y
        if not sxx > 0 or sxy / sxx <= 0:
            return None
        return sxy / sxx, mean_y - sxy / sxx * mean_x

    @staticmethod
    def at(solution, x):
        return max(0.0, solution[1]) + solution[0] * x


def follow(drift, measured, fitted):
    return math.exp((1 - DRIFT_WEIGHT) * math.log(drift) + DRIFT_WEIGHT * math.log(measured / fitted))


class SharedFit:
    def __init__(self):
        self.fit, self.drift = DecayingFit(), {"any": 1.0}

    def predict(self, x, kind):
        solution = self.fit.solve()
        return solution and DecayingFit.at(solution, x) * self.drift.get(kind, self.drift["any"])

    def observe(self, x, y, kind):
        solution = self.fit.solve()
        if solution:
            fitted = DecayingFit.at(solution, x)
            self.drift["any"] = follow(self.drift["any"], y, fitted)
            self.drift[kind] = follow(self.drift.get(kind, 1.0), y, fitted)  # a kind's factor starts at 1
        self.fit.add(x, y / self.drift.get(kind, self.drift["any"]))


class KindFit:
    def __init__(self):
        self.all, self.kinds, self.drift = DecayingFit(), {}, 1.0

    def own(self, kind):
        fit = self.kinds.get(kind)
        return fit and fit.solve(KIND_FIT_SPAN)

    def predict(self, x, kind):
        solution = self.own(kind) or self.all.solve()
        return solution and DecayingFit.at(solution, x) * self.drift

    def observe(self, x, y, kind):
        solution = self.own(kind)
        if solution:
            self.drift = follow(self.drift, y, DecayingFit.at(solution, x))
        self.all.add(x, y / self.drift)
        self.kinds.setdefault(kind, DecayingFit()).add(x, y / self.drift)


def main(paths):
    runs = []
    for path in paths:
        observations = json.load(open(path))["extra"].get("speed_observations", {})
        for dtype, steps in observations.items():
            if len(steps) != len(KINDS):
                sys.exit(f"{path}: {dtype} has {len(steps)} observations, expected {len(KINDS)}")
            runs.append((f"{path} {dtype}", [(s["flops_per_block"], s["seconds_per_block"], k) for s, k in zip(steps, KINDS)]))
    if not runs:
        sys.exit("no speed_observations in the given files")
    for name, model in (("shared-fit", SharedFit), ("kind-fit", KindFit)):
        errors = []
        for _, steps in runs:
            estimator = model()
            for index, (x, y, kind) in enumerate(steps):
                predicted = estimator.predict(x, kind)
                if index >= 6 and predicted:  # the rows, after the warm-up
                    errors.append(abs(predicted / y - 1))
                estimator.observe(x, y, kind)
        errors.sort()
        within = sum(e <= 0.10 for e in errors)
        print(f"{name:10s} {within}/{len(errors)} steps within 10%, median error {100 * errors[len(errors) // 2]:.1f}%, "
              f"largest {100 * errors[-1]:.1f}% ({len(runs)} runs)")


if __name__ == "__main__":
    main(sys.argv[1:])
