// `flashps bench store`: the activation store against plain file I/O of the same bytes, in one
// run: capture write, cold disk->host read, host-tier hits, and partial-row reads at a mask ratio.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "core/diagnostics/progress.h"

namespace flashps::bench {

struct StoreBenchmarkOptions {
  std::string directory;      // scratch folder on the disk to measure (removed afterwards)
  int64_t megabytes = 256;    // capture size
  int64_t tokens = 1024;      // rows per entry
  int64_t width = 512;        // values per row (float32)
  double mask_ratio = 0.2;    // partial reads fetch the unmasked (1 - m) rows
  uint64_t seed = 0;
  ProgressCallback progress;
};

struct StoreBenchmarkReport {
  nlohmann::json results;
  std::string table() const;
};

StoreBenchmarkReport run_store_benchmark(const StoreBenchmarkOptions& options);

}  // namespace flashps::bench
