// An online estimate of a device's speed (engine/cost_model.h's DeviceSpeed) from the edits it
// runs: every denoising step reports its blocks' FLOPs and its measured seconds, every replay its
// bytes loaded and the loader's seconds. Seconds per block are fitted as fixed + FLOPs / speed by
// least squares over relative errors with exponentially decaying weights (an EWMA of the fit),
// so the planner plans with what this device did recently, not with a guess. Until two distinct
// sizes have been seen, only the per-FLOP speed moves (the prior's fixed cost is kept).
// A shared machine also drifts: the same step runs 20-30% faster or slower for minutes. So the
// fits learn the shape (fixed cost against per-FLOP cost) and a drift factor, a fast geometric
// EWMA of measured over fitted seconds, scales them: a drift shows in the next plan, not after
// the slow fit has forgotten the old speed. The fits are fed drift-corrected times, so the two do
// not count a change twice. The shape is kept per kind of step (full, kv or hidden replay) once
// that kind has been seen at sizes 1.5x apart, else the fit of all steps stands in: a kv replay
// copies every cached key and value whatever the mask (a fixed cost of its own) and attends over
// all of them for few queries, so at the same FLOPs a small kv step runs slower than a hidden
// one and a large one faster, which no one line follows. The drift is the machine's, so it is
// shared by every kind: a slow stretch seen in a hidden step moves the next kv plan too. Only a
// step whose kind has its own fit moves it (measured over another kind's shape it would be that
// shape's error). Chosen on the recorded observations of five `bench edit` runs: per block, 100
// of 117 steps predicted within 10% against 98 with one shared fit and a drift per kind
// (benchmarks/replay_speed_observations.py).
#pragma once
#include <array>
#include <mutex>

#include "engine/cost_model.h"

namespace flashps::engine {

// What a step ran, for the drift per kind; `any` for a mix (or when the caller does not know).
enum class StepKind { any, full, kv, hidden };

class SpeedEstimator {
 public:
  // decay: of the fit, per observation; drift_weight: of the newest observation in the drift
  // factor (0 keeps it at 1).
  explicit SpeedEstimator(DeviceSpeed prior = {}, double decay = 0.9, double drift_weight = 0.5);

  // One step: `blocks` blocks doing `flops` FLOPs in all took `seconds` (blocks only).
  void observe_compute(double flops, int blocks, double seconds, StepKind kind = StepKind::any);
  // The loader read `bytes` in `reads` reads taking `seconds` in all.
  void observe_load(double bytes, int reads, double seconds);
  // The speed model for steps of `kind`: that kind's fit once it has one (else the fit of all
  // steps), times the drift.
  DeviceSpeed speed(StepKind kind = StepKind::any) const;
  int compute_observations() const;
  double drift() const;  // measured over fitted compute seconds, recently

 private:
  struct DecayingFit {  // weighted sums of x, y, x², xy and the weight
    double w = 0, x = 0, y = 0, xx = 0, xy = 0;
    double min_x = 0, max_x = 0;
    int count = 0;
    void add(double x_value, double y_value, double decay);
    // slope and intercept; false while the sizes seen span less than `span` (max over min)
    bool solve(double& slope, double& intercept, double span = 1.1) const;
  };

  mutable std::mutex mutex_;
  DeviceSpeed prior_;
  double decay_, drift_weight_;
  double drift_ = 1.0;
  static constexpr int kKinds = 4;
  std::array<DecayingFit, kKinds> compute_;  // by StepKind; `any` holds every step
  DecayingFit load_;
  // `kind`'s own fit (the fit of all steps for `any`); false while it does not solve.
  bool solve_own_fit_locked(StepKind kind, double& slope, double& intercept) const;
  // The fit that models `kind`'s steps: its own, else the fit of all steps; false while neither solves.
  bool solve_compute_locked(StepKind kind, double& slope, double& intercept) const;
};

}  // namespace flashps::engine
