// A cluster of simulated devices on a virtual clock: each device advances time by a ground truth
// of step latencies (serve_tools/step_ground_truth.h) instead of computing, while requests flow
// through the same load balancer and worker batchers as real serving; the balancer routes with
// the profile's fitted model, which the ground truth need not equal. Deterministic for a seed:
// 64 GPUs and thousands of requests replay in seconds.
#pragma once
#include <vector>

#include "serve/batching.h"
#include "serve/device_profile.h"
#include "serve/load_balancer.h"
#include "serve_tools/step_ground_truth.h"
#include "serve_tools/workload.h"

namespace flashps::serve {

struct SimulationOptions {
  BatchingConfig batching;
  BalancePolicy policy = BalancePolicy::mask_aware;
  int devices = 8;
  DeviceProfile profile;  // every device's, as the balancer knows it
  GroundTruthOptions ground_truth;  // what steps really take (default: exactly the profile)
  int pool_threads_per_device = 2;  // disaggregated pre-/post-processing workers
};

struct RequestOutcome {
  double arrival = 0;
  double first_step = -1;  // when its first denoising step started
  double finish = -1;      // when its result was ready (after post-processing)
  int worker = -1;
  double latency() const { return finish - arrival; }
  double queueing() const { return first_step - arrival; }
};

struct SimulationResult {
  std::vector<RequestOutcome> outcomes;  // in trace order
  std::vector<size_t> completion_order;  // trace indices
  double makespan = 0;
  double scheduler_seconds = 0;  // real time spent choosing workers, all decisions
  int decisions = 0;
};

SimulationResult simulate(const SimulationOptions& options, const std::vector<TraceRequest>& trace);

}  // namespace flashps::serve
