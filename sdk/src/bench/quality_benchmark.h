// `flashps bench quality`: how well a model fills masked regions of held-out photos, against
// classical baselines (mean-colour, pyramid and Telea fills), and how closely mask-aware editing (kv, hidden)
// reproduces full computation on that model. All in one run, on the same crops and masks.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/diagnostics/progress.h"

namespace flashps::bench {

struct QualityBenchmarkOptions {
  std::string model_dir;
  std::vector<std::string> photo_folders;  // their held-out split is used
  int holdout_every = 8;                   // must match the split the model was trained with
  std::vector<std::string> trace_files;    // mask areas; empty = uniform fallback
  int crops = 24;
  int crop_size = 256;
  int steps = 20;
  int fidelity_crops = 4;  // crops on which kv/hidden replay is compared with full compute
  uint64_t seed = 1;
  ProgressCallback progress;
};

struct QualityRow {
  std::string method;  // model | mean_fill | pyramid | telea
  double psnr = 0, ssim = 0;  // masked region, averaged over crops
  double block_step_ratio = 0;  // masked region: steps across token borders / inside tokens (photos ~1; NaN: flat)
  // Masked region: fine detail of the fill / that of the ground truth, summed over crops
  // (core/metrics/image_metrics.h detail_energy). 1: as textured as the photo; 0: flat; above 1: noisier.
  double detail_ratio = 0;
  double seconds = 0;         // total time of this method over all crops
};

struct FidelityRow {
  std::string mode;  // kv | hidden
  double ssim_mean = 0, ssim_min = 0, psnr_mean = 0;  // masked region, vs full compute
  double speedup = 0;                                 // full seconds / replay seconds
};

struct QualityReport {
  nlohmann::json config;
  std::vector<QualityRow> rows;
  std::vector<FidelityRow> fidelity;
  nlohmann::json to_json() const;
  std::string table() const;
};

QualityReport run_quality_benchmark(const QualityBenchmarkOptions& options);

}  // namespace flashps::bench
