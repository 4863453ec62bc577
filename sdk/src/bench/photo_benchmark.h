// `flashps bench photo`: camera-sized photos edited with a large mask, with texture transfer on
// and off side by side: seconds of the edit and peak memory (RSS) of a process doing only that.
// Each run is a child process (fork before any LibTorch work), so its peak RSS is its own.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/diagnostics/progress.h"

namespace flashps::bench {

struct PhotoBenchmarkOptions {
  std::string model_dir;
  std::string photo;                          // scaled up to each size, with fine noise added as camera detail
  std::vector<double> megapixels = {12, 24};  // 4:3 photos
  double mask_ratio = 0.34;
  int steps = 0;    // 0: the model's recommendation
  int repeats = 3;  // runs per row, alternating texture off and on; the fastest is reported
  uint64_t seed = 1;
  ProgressCallback progress;
};

struct PhotoRow {
  int width = 0, height = 0;
  double mask_ratio = 0;  // masked pixels / pixels, as generated
  bool texture = false;
  double seconds = 0;      // the edit: pipeline call, image in to image out (fastest run)
  double cpu_seconds = 0;  // CPU time of that run's edit, all threads (less sensitive to other load)
  double peak_rss_mb = 0;  // the whole child process (photo, mask, model and the edit); largest run
  std::string error;       // a run that failed says why (then seconds and RSS are 0)
};

struct PhotoReport {
  nlohmann::json config;
  std::vector<PhotoRow> rows;
  nlohmann::json to_json() const;
  std::string table() const;
};

PhotoReport run_photo_benchmark(const PhotoBenchmarkOptions& options);

}  // namespace flashps::bench
