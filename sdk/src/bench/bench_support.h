// Helpers shared by the model benchmarks: the masks they edit and how runs are timed.
#pragma once
#include <algorithm>
#include <chrono>
#include <limits>

#include "engine/token_mask.h"

namespace flashps::bench {

// A compact blob of round(ratio * tokens) tokens of a square grid: those nearest a fixed
// off-centre point (an edit's mask, not scattered tokens).
engine::TokenMask blob_mask(int64_t grid, double ratio);

// The fastest of `repeats` runs, in seconds.
template <typename Run>
double fastest_of(int repeats, Run run) {
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < std::max(1, repeats); ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

}  // namespace flashps::bench
