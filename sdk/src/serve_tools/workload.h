// Request streams for serving benchmarks and simulations: arrival times from a Poisson or Gamma
// process (bursty when the coefficient of variation exceeds 1) and mask ratios from the real
// editing traces, or, where ../shared/traces is absent, from Beta distributions fitted to them.
#pragma once
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "engine/request_work.h"

namespace flashps::serve {

using engine::RequestWork;

struct TraceRequest {
  double arrival = 0;   // seconds from the start
  double mask_ratio = 0;
  RequestWork work;     // as if its template is cached; as estimated at submission
  // What the request turns out to be once prepared (the engine's balancer routes with `work`,
  // its steps run `exact_work`); absent: the same.
  std::optional<RequestWork> exact_work;
};

class MaskRatioSource {
 public:
  // `name`: production | public (the paper's public trace: inpaint + adetailer) | public-inpaint |
  // public-adetailer | all, read from `traces_dir`; or a path to a CSV with a mask_ratio column.
  // Where the trace files are missing, falls back to the fitted Beta distribution of that name
  // (see `parametric`) and says so in description().
  static MaskRatioSource named(const std::string& name, const std::string& traces_dir);
  // Beta fits by the method of moments (mean, variance of each file):
  //   production        Beta(2.505, 19.814)  mean 0.112
  //   public-inpaint    Beta(0.563, 1.028)   mean 0.354
  //   public-adetailer  Beta(1.502, 51.027)  mean 0.029
  //   public            1918:1870 mixture of the two public fits, mean 0.193
  static MaskRatioSource parametric(const std::string& name);

  double sample(std::mt19937_64& rng) const;
  const std::string& description() const { return description_; }

 private:
  std::vector<double> samples_;  // empirical; empty = parametric
  struct BetaPart {
    double weight, alpha, beta;
  };
  std::vector<BetaPart> parts_;
  std::string description_;
};

struct WorkloadOptions {
  double requests_per_second = 1.0;
  std::string arrivals = "poisson";  // poisson | gamma
  double cv = 1.0;                   // gamma: coefficient of variation of inter-arrival times
  int requests = 500;
  uint64_t seed = 1;
  int64_t image_tokens = 4096, text_tokens = 512;
  int steps = 28;
};

std::vector<TraceRequest> make_workload(const WorkloadOptions& options, const MaskRatioSource& ratios);

}  // namespace flashps::serve
