// What a simulated step "really" takes: the simulator's clock, kept apart from the cost model the
// mask-aware balancer routes with. A balancer that is timed by its own model knows every outcome
// exactly; these ground truths make it predict instead:
//   exact     the balancer's profile itself (the old behaviour; an upper bound for the policy);
//   noisy     the profile times a random factor per step (log-normal, mean 1, `noise_cv`);
//   measured  replays the profile's recorded steps (`flashps profile` keeps every timing): the
//             nearest recorded batch, interpolated in FLOPs, times a deviation drawn from the
//             measured repeats. The balancer sees only the two-parameter fit of these steps.
// Workers sharing one host (`shared_host`: the real CPU workers of `bench serve --workers N`)
// slow each other down through the cores' shared caches and memory bandwidth. With a profile that
// timed its steps beside co-running workers (`flashps profile --co-runners N`), the measured
// truth scales a step by that measured slowdown whenever other simulated devices are stepping
// as it starts (by the share of the measured co-runners that are busy, at most all of them).
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
  bool shared_host = false;     // the simulated devices are workers of one machine (see above)
  uint64_t seed = 1;
  std::string label() const;    // "exact", "measured+skew+0.20", "measured+co-run", ...
};

class StepGroundTruth {
 public:
  // `profile` is the balancer's (with measured_steps for the measured kind: Error without them).
  StepGroundTruth(const DeviceProfile& profile, const GroundTruthOptions& options);

  // `busy_neighbours`: other devices of the host stepping as this step starts.
  double step_seconds(const std::vector<RequestWork>& batch, int busy_neighbours = 0);
  // step_seconds without its random part: the model, or the replayed median (times the co-run
  // slowdown).
  double expected_seconds(const std::vector<RequestWork>& batch, int busy_neighbours = 0) const;
  // Whether steps slow down beside busy neighbours (shared_host, measured, co-run timings).
  bool models_co_running() const;
  double preprocess_seconds();
  double postprocess_seconds();

 private:
  double noise();
  struct Replayed {
    double seconds = 0;
    double co_run_slowdown = 1;  // with the profile's co-runners beside it
  };
  Replayed replay(const std::vector<RequestWork>& batch) const;

  GroundTruthOptions options_;
  DeviceProfile truth_;              // the profile with the systematic error applied
  DeviceProfile unit_;               // the balancer's profile: FLOP counts only
  std::vector<double> deviations_;   // measured: relative deviations of repeats from their median
  struct Recorded {
    double median_seconds = 0;
    double co_run_slowdown = 1;
  };
  std::vector<Recorded> recorded_;   // measured: per measured step, in the profile's order
  std::mt19937_64 rng_;
};

}  // namespace flashps::serve
