// An online estimate of a device's speed (engine/cost_model.h's DeviceSpeed) from the edits it
// runs: every denoising step reports its blocks' FLOPs and its measured seconds, every replay its
// bytes loaded and the loader's seconds. Seconds per block are fitted as fixed + FLOPs / speed by
// least squares over relative errors with exponentially decaying weights (an EWMA of the fit),
// so the planner plans with what this device did recently, not with a guess. Until two distinct
// sizes have been seen, only the per-FLOP speed moves (the prior's fixed cost is kept).
// A shared machine also drifts: the same step runs 20-30% faster or slower for minutes. So the
// fit learns the shape (fixed cost against per-FLOP cost) and a drift factor, a fast geometric
// EWMA of measured over fitted seconds, scales it: a drift shows in the next plan, not after
// the slow fit has forgotten the old speed. The fit is fed drift-corrected times, so the two do
// not count a change twice. The drift is kept per kind of step too (full, kv or hidden replay):
// at the same FLOPs a kv step at a small mask runs at a lower rate than a hidden one (attention
// over every cached key for few queries), which one shape cannot follow.
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
  // The speed model for steps of `kind`: the fit times that kind's drift once one was seen,
  // else the drift of all steps.
  DeviceSpeed speed(StepKind kind = StepKind::any) const;
  int compute_observations() const;
  double drift(StepKind kind = StepKind::any) const;  // measured over fitted compute seconds, recently

 private:
  struct DecayingFit {  // weighted sums of x, y, x², xy and the weight
    double w = 0, x = 0, y = 0, xx = 0, xy = 0;
    double min_x = 0, max_x = 0;
    int count = 0;
    void add(double x_value, double y_value, double decay);
    // slope and intercept; false while the sizes seen span less than 10%
    bool solve(double& slope, double& intercept) const;
  };

  mutable std::mutex mutex_;
  DeviceSpeed prior_;
  double decay_, drift_weight_;
  static constexpr int kKinds = 4;
  std::array<double, kKinds> drift_{1.0, 1.0, 1.0, 1.0};  // by StepKind
  std::array<bool, kKinds> drift_seen_{};
  double drift_locked(StepKind kind) const;
  DecayingFit compute_, load_;
};

}  // namespace flashps::engine
