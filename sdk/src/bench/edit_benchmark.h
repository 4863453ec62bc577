// `flashps bench edit`: full computation vs mask-aware replay (kv, hidden with the planner) on a
// random-weight Flux-architecture transformer, all measured side by side in one run, each row
// beside the time the planner's model predicted for it (engine/speed_estimator.h, calibrated
// online from steps measured before the row).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/diagnostics/progress.h"
#include "models/flux/flux_config.h"

namespace flashps::bench {

struct EditBenchmarkOptions {
  FluxConfig model;              // default: the reference config (see reference_bench_config)
  int64_t grid = 32;             // image tokens = grid * grid
  int64_t text_tokens = 64;
  int steps = 8;
  std::vector<double> mask_ratios = {0.05, 0.1, 0.2, 0.35, 0.5, 1.0};
  std::vector<std::string> dtypes = {"fp32", "bf16"};
  int repeats = 1;               // timed runs per row (the fastest is reported)
  bool compare_allocator = true; // also time one full step with glibc's default malloc settings
  uint64_t seed = 0;
  std::string device = "cpu";    // "cpu", "cuda:0", ... (the model, inputs and replays live there)
  // Also runs every row once more with the phase profiler on (core/diagnostics/phase_profile.h) and
  // reports where each step's time goes, phase by phase (extra["phase_profile"]).
  bool phase_profile = false;
  ProgressCallback progress;
};

// The config diffusers' FluxTransformer2DModel was timed with on this machine kind:
// in_channels 384, 4 heads x 128, 4 double + 8 single blocks, joint 512, pooled 256.
FluxConfig reference_bench_config();
// FLUX.1 Fill's transformer size (random weights): 19 double + 38 single blocks, 24 heads x 128
// (hidden 3072), T5 context 4096 wide, pooled 768. Run it with grid 64 (4096 image tokens, 1024
// px) and 512 text tokens, in bf16: 12B parameters (24 GB), a GPU's job.
FluxConfig flux1_size_config();

struct EditBenchmarkRow {
  std::string mode;  // full | kv | hidden
  double mask_ratio = 1.0;
  std::string dtype;
  double seconds = 0;  // whole denoising loop
  double predicted_seconds = 0;  // the planner's model, calibrated online before this row ran
  double speedup = 1, ideal_speedup = 1;
  int64_t cache_bytes = 0;  // bytes loaded from the capture
  int blocks_from_cache = 0;
  double load_wait_seconds = 0;
};

struct EditBenchmarkReport {
  nlohmann::json config;
  std::vector<EditBenchmarkRow> rows;
  nlohmann::json extra;  // allocator comparison, fidelity (SSIM), capture sizes
  nlohmann::json to_json() const;
  std::string table() const;
  std::string phase_table() const;  // empty without a phase profile
};

EditBenchmarkReport run_edit_benchmark(const EditBenchmarkOptions& options);

}  // namespace flashps::bench
