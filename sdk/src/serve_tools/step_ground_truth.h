// What a simulated step "really" takes: the simulator's clock, kept apart from the cost model the
// mask-aware balancer routes with. A balancer that is timed by its own model knows every outcome
// exactly; these ground truths make it predict instead:
//   exact     the balancer's profile itself (the old behaviour; an upper bound for the policy);
//   noisy     the profile times a random factor per step (log-normal, mean 1, `noise_cv`);
//   measured  replays the profile's recorded steps (`flashps profile` keeps every timing): the
//             nearest recorded batch, interpolated in FLOPs, times a deviation drawn from the
//             measured repeats. The balancer sees only the two-parameter fit of these steps.
// Any of them can carry a systematic error (`model_error` e): the true per-FLOP cost is (1 + e)
// times the model's and, with the "skew" kind, the fixed per-block cost (1 - e) times, so large
// and small requests are mis-estimated in opposite directions; "scale" multiplies everything.
#pragma once
#include <random>
#include <string>
#include <vector>

#include "serve/device_profile.h"

namespace flashps::serve {

enum class GroundTruthKind { exact, noisy, measured };
GroundTruthKind ground_truth_kind_from_name(const std::string& name);  // Error for unknown names
const char* ground_truth_kind_name(GroundTruthKind kind);

struct GroundTruthOptions {
  GroundTruthKind kind = GroundTruthKind::exact;
  double noise_cv = 0.1;        // noisy: spread of the per-step factor
  double model_error = 0;       // systematic error, as a fraction (-0.9 .. 9)
  bool error_skews = true;      // skew (opposite errors for per-FLOP and fixed costs) or scale
  uint64_t seed = 1;
  std::string label() const;    // "exact", "measured+skew+0.20", ...
};

class StepGroundTruth {
 public:
  // `profile` is the balancer's (with measured_steps for the measured kind: Error without them).
  StepGroundTruth(const DeviceProfile& profile, const GroundTruthOptions& options);

  double step_seconds(const std::vector<RequestWork>& batch);
  double preprocess_seconds();
  double postprocess_seconds();

 private:
  double noise();
  double replay(const std::vector<RequestWork>& batch) const;

  GroundTruthOptions options_;
  DeviceProfile truth_;              // the profile with the systematic error applied
  DeviceProfile unit_;               // the balancer's profile: FLOP counts only
  std::vector<double> deviations_;   // measured: relative deviations of repeats from their median
  std::mt19937_64 rng_;
};

}  // namespace flashps::serve
