// How many requests a worker steps together when the caller leaves it to the device (max batch
// 0). Continuous batching steps every running request together, so each one advances at the
// pace of the whole batch: worth it where a batch costs less per request than single steps (a
// GPU shares its fixed per-step costs), a loss where it does not. On this project's CPU the
// measured batches of 2-8 cost each request within 3% of a single step, while a small edit
// batched with a large one took the large one's time: serving at batch 1 there lowered the
// simulated P95 by 30% at the same load (benchmarks/README.md). Decided from measured steps
// only; without them the default stays.
#pragma once
#include <string>

#include "serve/batching.h"
#include "serve/device_profile.h"

namespace flashps::serve {

constexpr int kDefaultMaxBatch = 8;

struct BatchSizeChoice {
  int max_batch = kDefaultMaxBatch;
  // Median over the profile's measured multi-request steps of their seconds over the same
  // requests' seconds stepped one at a time (interpolated from the single-request steps); 0 when
  // the profile has too few to compare.
  double batched_over_single = 0;
  std::string reason;  // one line, for logs and reports
};

// Batch 1 when batched steps saved under 10% per request, else kDefaultMaxBatch.
BatchSizeChoice choose_max_batch(const DeviceProfile& profile);
// `config` for a worker on the device of `profile`: its max batch chosen when it is 0.
BatchingConfig batching_for_device(BatchingConfig config, const DeviceProfile& profile);

}  // namespace flashps::serve
