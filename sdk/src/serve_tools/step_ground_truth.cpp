#include "serve_tools/step_ground_truth.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

#include "core/diagnostics/error.h"

namespace flashps::serve {
namespace {

bool any_cached(const std::vector<RequestWork>& batch) {
  return std::any_of(batch.begin(), batch.end(), [](const RequestWork& work) { return work.cached; });
}

}  // namespace

GroundTruthKind ground_truth_kind_from_name(const std::string& name) {
  if (name == "exact") return GroundTruthKind::exact;
  if (name == "noisy") return GroundTruthKind::noisy;
  if (name == "measured") return GroundTruthKind::measured;
  throw Error("unknown ground truth \"" + name + "\" (exact, noisy or measured)");
}

const char* ground_truth_kind_name(GroundTruthKind kind) {
  switch (kind) {
    case GroundTruthKind::exact: return "exact";
    case GroundTruthKind::noisy: return "noisy";
    case GroundTruthKind::measured: return "measured";
  }
  return "?";
}

std::string GroundTruthOptions::label() const {
  std::string text = ground_truth_kind_name(kind);
  if (model_error != 0) {
    char error[48];
    std::snprintf(error, sizeof error, "%s%+.2f", error_skews ? "+skew" : "+scale", model_error);
    text += error;
  }
  if (shared_host && kind == GroundTruthKind::measured) text += "+co-run";
  return text;
}

StepGroundTruth::StepGroundTruth(const DeviceProfile& profile, const GroundTruthOptions& options)
    : options_(options), truth_(profile), unit_(profile), rng_(options.seed) {
  if (!(options.model_error > -0.9 && options.model_error < 9))
    throw Error("model error must be within (-0.9, 9), as a fraction");
  if (!(options.noise_cv >= 0 && options.noise_cv < 5)) throw Error("noise cv must be within [0, 5)");
  const double e = options.model_error;
  truth_.block_compute.slope *= 1 + e;
  truth_.block_compute.intercept *= options.error_skews ? 1 - e : 1 + e;
  truth_.block_load.slope *= 1 + e;
  truth_.block_load.intercept *= options.error_skews ? 1 - e : 1 + e;
  truth_.step_fixed_seconds *= options.error_skews ? 1 - e : 1 + e;
  if (options.kind == GroundTruthKind::measured) {
    if (profile.measured_steps.empty())
      throw Error("the measured ground truth needs a profile with measured steps (written by `flashps profile`): " +
                  profile.name);
    for (const MeasuredStep& step : profile.measured_steps) {
      const double middle = median_of(step.seconds);
      for (double seconds : step.seconds) deviations_.push_back(seconds / middle - 1);
      recorded_.push_back({middle, co_run_slowdown(step)});  // once, not at every replayed step
    }
  }
}

double StepGroundTruth::noise() {
  if (options_.kind == GroundTruthKind::exact) return 1.0;
  if (options_.kind == GroundTruthKind::measured) {
    std::uniform_int_distribution<size_t> pick(0, deviations_.size() - 1);
    return std::max(0.05, 1 + deviations_[pick(rng_)]);
  }
  if (options_.noise_cv <= 0) return 1.0;
  const double sigma2 = std::log1p(options_.noise_cv * options_.noise_cv);
  std::lognormal_distribution<double> factor(-sigma2 / 2, std::sqrt(sigma2));  // mean 1
  return factor(rng_);
}

// The recorded steps with the same path (replay or full) and the nearest batch size, as median
// seconds over FLOPs; the batch's FLOPs placed on that polyline (the end segments extended).
StepGroundTruth::Replayed StepGroundTruth::replay(const std::vector<RequestWork>& batch) const {
  const bool replays = any_cached(batch);
  const double flops = estimate_step(unit_, batch).flops;
  const double size = static_cast<double>(batch.size());
  const std::vector<MeasuredStep>& steps = unit_.measured_steps;
  std::vector<size_t> same_path;
  for (size_t i = 0; i < steps.size(); ++i)
    if (any_cached(steps[i].batch) == replays) same_path.push_back(i);
  if (same_path.empty())
    for (size_t i = 0; i < steps.size(); ++i) same_path.push_back(i);
  double nearest_size = 0, best_distance = 1e300;
  for (size_t i : same_path) {
    const double recorded_size = double(steps[i].batch.size());
    const double distance = std::abs(std::log(recorded_size / size));
    if (distance < best_distance - 1e-12 || (distance < best_distance + 1e-12 && recorded_size > nearest_size))
      best_distance = distance, nearest_size = recorded_size;
  }
  std::vector<std::tuple<double, double, double>> points;  // (FLOPs, median seconds, co-run slowdown)
  for (size_t i : same_path)
    if (double(steps[i].batch.size()) == nearest_size)
      points.push_back({steps[i].flops, recorded_[i].median_seconds, recorded_[i].co_run_slowdown});
  std::sort(points.begin(), points.end());
  if (points.size() == 1) {
    const auto [x, y, slowdown] = points[0];
    return {y * flops / x, slowdown};
  }
  size_t upper = 1;
  while (upper + 1 < points.size() && std::get<0>(points[upper]) < flops) ++upper;
  const auto [x0, y0, s0] = points[upper - 1];
  const auto [x1, y1, s1] = points[upper];
  const double slope = x1 > x0 ? (y1 - y0) / (x1 - x0) : 0;
  double seconds = y0 + slope * (flops - x0);
  // Beyond the measured range a flat or falling segment says nothing: scale the end point instead.
  if (slope <= 0 || seconds <= 0) seconds = (flops < x0 ? y0 * flops / x0 : y1 * flops / x1);
  // The slowdown between the two points, the nearer end's beyond them.
  const double at = x1 > x0 ? std::clamp((flops - x0) / (x1 - x0), 0.0, 1.0) : 0.0;
  const double slowdown = s0 + at * (s1 - s0);
  // The error applies to measured steps too: FLOP-proportional share (the fit's) vs the rest.
  const double e = options_.model_error;
  if (e != 0) {
    const double blocks = double(unit_.blocks.size());
    const double fixed = std::min(seconds, unit_.block_compute.intercept * blocks);
    seconds = options_.error_skews ? (seconds - fixed) * (1 + e) + fixed * (1 - e) : seconds * (1 + e);
  }
  return {seconds, slowdown};
}

bool StepGroundTruth::models_co_running() const {
  return options_.shared_host && options_.kind == GroundTruthKind::measured && unit_.co_runners > 0;
}

double StepGroundTruth::expected_seconds(const std::vector<RequestWork>& batch, int busy_neighbours) const {
  if (batch.empty()) return 0;
  if (options_.kind != GroundTruthKind::measured) return estimate_step(truth_, batch).seconds;
  const Replayed replayed = replay(batch);
  double seconds = replayed.seconds;
  if (models_co_running() && busy_neighbours > 0) {
    const double share = std::min(1.0, double(busy_neighbours) / unit_.co_runners);
    seconds *= 1 + (replayed.co_run_slowdown - 1) * share;
  }
  return seconds;
}

double StepGroundTruth::step_seconds(const std::vector<RequestWork>& batch, int busy_neighbours) {
  if (batch.empty()) return 0;  // draws no noise, so the random sequence is the steps'
  return expected_seconds(batch, busy_neighbours) * noise();
}

double StepGroundTruth::preprocess_seconds() { return unit_.preprocess_seconds * noise(); }

double StepGroundTruth::postprocess_seconds() { return unit_.postprocess_seconds * noise(); }

}  // namespace flashps::serve
