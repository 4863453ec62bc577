#include "engine/speed_estimator.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

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

bool SpeedEstimator::DecayingFit::solve(double& slope, double& intercept) const {
  if (count < 2 || max_x < 1.1 * min_x) return false;
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

void SpeedEstimator::observe_compute(double flops, int blocks, double seconds, StepKind kind) {
  if (!(flops > 0) || blocks < 1 || !(seconds > 0) || !std::isfinite(seconds)) return;
  std::lock_guard<std::mutex> lock(mutex_);
  const double x = flops / blocks, y = seconds / blocks;
  double slope = 0, intercept = 0;
  if (compute_.solve(slope, intercept)) {  // the drift this step implies: measured over the fit's shape
    const double fitted = std::max(0.0, intercept) + slope * x;
    if (fitted > 0) {
      const auto follow = [&](StepKind which) {
        double& drift = drift_[static_cast<int>(which)];
        drift = std::exp((1 - drift_weight_) * std::log(drift) + drift_weight_ * std::log(y / fitted));
        drift_seen_[static_cast<int>(which)] = true;
      };
      follow(StepKind::any);
      if (kind != StepKind::any) follow(kind);
    }
  }
  compute_.add(x, y / drift_locked(kind), decay_);
}

double SpeedEstimator::drift_locked(StepKind kind) const {
  const int index = static_cast<int>(kind);
  return drift_seen_[index] ? drift_[index] : drift_[static_cast<int>(StepKind::any)];
}

double SpeedEstimator::drift(StepKind kind) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return drift_locked(kind);
}

void SpeedEstimator::observe_load(double bytes, int reads, double seconds) {
  if (!(bytes > 0) || reads < 1 || !(seconds > 0) || !std::isfinite(seconds)) return;
  std::lock_guard<std::mutex> lock(mutex_);
  load_.add(bytes / reads, seconds / reads, decay_);
}

int SpeedEstimator::compute_observations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return compute_.count;
}

DeviceSpeed SpeedEstimator::speed(StepKind kind) const {
  std::lock_guard<std::mutex> lock(mutex_);
  DeviceSpeed speed = prior_;
  const auto update = [](const DecayingFit& fit, double& per_second, double& fixed) {
    if (fit.count == 0) return;
    double slope = 0, intercept = 0;
    if (fit.solve(slope, intercept)) {
      per_second = 1.0 / slope;
      fixed = std::max(0.0, intercept);
    } else {  // one size seen: keep the fixed cost, rescale the rate to match it (if it can)
      const double mean_x = fit.x / fit.w, mean_y = fit.y / fit.w;
      if (mean_y > fixed) per_second = mean_x / (mean_y - fixed);
    }
  };
  update(compute_, speed.flops_per_second, speed.fixed_seconds_per_block);
  const double drift = drift_locked(kind);  // 1 until the fit has two sizes
  speed.flops_per_second /= drift;
  speed.fixed_seconds_per_block *= drift;
  update(load_, speed.load_bytes_per_second, speed.fixed_seconds_per_load);
  return speed;
}

}  // namespace flashps::engine
