#include "engine/speed_estimator.h"

#include <algorithm>
#include <cmath>

#include "core/diagnostics/error.h"

namespace flashps::engine {

void SpeedEstimator::DecayingFit::add(double x_value, double y_value, double decay) {
  const double weight = 1.0 / (y_value * y_value);  // relative errors
  w = w * decay + weight;
  x = x * decay + weight * x_value;
  y = y * decay + weight * y_value;
  xx = xx * decay + weight * x_value * x_value;
  xy = xy * decay + weight * x_value * y_value;
  min_x = count ? std::min(min_x, x_value) : x_value;
  max_x = count ? std::max(max_x, x_value) : x_value;
  ++count;
}

bool SpeedEstimator::DecayingFit::solve(double& slope, double& intercept, double span) const {
  if (count < 2 || max_x < span * min_x) return false;
  const double mean_x = x / w, mean_y = y / w;
  const double sxx = xx / w - mean_x * mean_x, sxy = xy / w - mean_x * mean_y;
  if (!(sxx > 0)) return false;
  slope = sxy / sxx;
  intercept = mean_y - slope * mean_x;
  return slope > 0;
}

SpeedEstimator::SpeedEstimator(DeviceSpeed prior, double decay, double drift_weight)
    : prior_(prior), decay_(decay), drift_weight_(drift_weight) {
  if (!(decay > 0 && decay <= 1)) throw Error("speed estimator: decay must be in (0, 1]");
  if (!(drift_weight >= 0 && drift_weight < 1)) throw Error("speed estimator: drift weight must be in [0, 1)");
}

namespace {
// A kind's own fit needs sizes this far apart: two close sizes with noise give a wild slope.
constexpr double kKindFitSpan = 1.5;
}  // namespace

bool SpeedEstimator::solve_own_fit_locked(StepKind kind, double& slope, double& intercept) const {
  return compute_[static_cast<int>(kind)].solve(slope, intercept, kind == StepKind::any ? 1.1 : kKindFitSpan);
}

bool SpeedEstimator::solve_compute_locked(StepKind kind, double& slope, double& intercept) const {
  return solve_own_fit_locked(kind, slope, intercept) || solve_own_fit_locked(StepKind::any, slope, intercept);
}

void SpeedEstimator::observe_compute(double flops, int blocks, double seconds, StepKind kind) {
  if (!(flops > 0) || blocks < 1 || !(seconds > 0) || !std::isfinite(seconds)) return;
  std::lock_guard<std::mutex> lock(mutex_);
  const double x = flops / blocks, y = seconds / blocks;
  double slope = 0, intercept = 0;
  // The drift this step implies, measured over its own kind's fit: measured over another kind's
  // shape would be that shape's error, which the kind's own fit would then learn as drift.
  if (solve_own_fit_locked(kind, slope, intercept)) {
    const double fitted = std::max(0.0, intercept) + slope * x;
    if (fitted > 0) drift_ = std::exp((1 - drift_weight_) * std::log(drift_) + drift_weight_ * std::log(y / fitted));
  }
  const double corrected = y / drift_;
  compute_[static_cast<int>(StepKind::any)].add(x, corrected, decay_);
  if (kind != StepKind::any) compute_[static_cast<int>(kind)].add(x, corrected, decay_);
}

double SpeedEstimator::drift() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return drift_;
}

void SpeedEstimator::observe_load(double bytes, int reads, double seconds) {
  if (!(bytes > 0) || reads < 1 || !(seconds > 0) || !std::isfinite(seconds)) return;
  std::lock_guard<std::mutex> lock(mutex_);
  load_.add(bytes / reads, seconds / reads, decay_);
}

int SpeedEstimator::compute_observations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return compute_[static_cast<int>(StepKind::any)].count;
}

DeviceSpeed SpeedEstimator::speed(StepKind kind) const {
  std::lock_guard<std::mutex> lock(mutex_);
  DeviceSpeed speed = prior_;
  // A solved fit gives both parameters; one size seen keeps the fixed cost and rescales the
  // rate to match it (if it can).
  const auto apply = [](bool solved, double slope, double intercept, const DecayingFit& fit, double& per_second,
                        double& fixed) {
    if (solved) {
      per_second = 1.0 / slope;
      fixed = std::max(0.0, intercept);
    } else if (fit.count > 0) {
      const double mean_x = fit.x / fit.w, mean_y = fit.y / fit.w;
      if (mean_y > fixed) per_second = mean_x / (mean_y - fixed);
    }
  };
  double slope = 0, intercept = 0;
  const bool compute_solved = solve_compute_locked(kind, slope, intercept);
  apply(compute_solved, slope, intercept, compute_[static_cast<int>(StepKind::any)], speed.flops_per_second,
        speed.fixed_seconds_per_block);
  speed.flops_per_second /= drift_;  // 1 until a fit has two sizes
  speed.fixed_seconds_per_block *= drift_;
  const bool load_solved = load_.solve(slope, intercept);
  apply(load_solved, slope, intercept, load_, speed.load_bytes_per_second, speed.fixed_seconds_per_load);
  return speed;
}

}  // namespace flashps::engine
