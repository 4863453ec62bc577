// `flashps bench edit --family sd`: a random-weight UNet at a real Stable Diffusion size, full
// computation vs mask-aware hidden replay of its transformer blocks and tiled ResNets, classifier-free guidance
// (batch 2), timed side by side in one run with the time split into Transformer2DModels vs the
// rest (ResNets, samplers, embeddings), plus the VAE decode at the same size.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/diagnostics/progress.h"
#include "models/unet/unet_config.h"

namespace flashps::bench {

// "sd2-inpaint" (stabilityai/stable-diffusion-2-inpainting, 865M parameters) or "sd15-inpaint"
// (runwayml/stable-diffusion-inpainting, 860M); Error for other names.
UNetConfig sd_bench_unet_config(const std::string& name);

struct SDEditBenchmarkOptions {
  std::string config = "sd2-inpaint";
  int64_t size = 512;  // pixels per side
  int steps = 2;
  std::vector<double> mask_ratios = {0.1, 0.2, 0.35};
  std::vector<std::string> dtypes = {"fp32", "bf16"};
  bool use_planner = true;
  // A diffusers UNet folder (config.json + weights) to run instead of the random-weight `config`,
  // such as the fixtures' tiny UNets: its trained or fixed weights give the fidelity figures.
  // Inpainting (9 input channels) and plain (4) UNets, SDXL's added conditions included.
  std::string unet_dir;
  bool time_vae = true;
  // Also profiles the VAE decode by phase (convolutions with their counted FLOPs, group norms,
  // the rest) in fp32 and bf16, and times the decoder's convolution shapes alone: what bounds it.
  bool phase_profile = false;
  // Photos for the VAE's bf16 accuracy check (encode + decode against float32's); skipped when
  // the folder does not exist.
  std::string photos_dir = "samples/images";
  uint64_t seed = 0;
  ProgressCallback progress;
};

struct SDEditBenchmarkRow {
  std::string mode;  // full | hidden
  double mask_ratio = 1.0;
  std::string dtype;
  double seconds = 0;              // the denoising loop
  double transformer_seconds = 0;  // of which in Transformer2DModels
  double speedup = 1, ideal_speedup = 1;  // ideal: FLOPs of the routed blocks (transformers, ResNets; cost model)
  int blocks_from_cache = 0, blocks_computed = 0;
  int64_t cache_bytes = 0;
  double load_wait_seconds = 0;
};

struct SDEditBenchmarkReport {
  nlohmann::json config;
  std::vector<SDEditBenchmarkRow> rows;
  nlohmann::json extra;  // parameters, VAE decode, capture size and time
  nlohmann::json to_json() const;
  std::string table() const;
};

SDEditBenchmarkReport run_sd_edit_benchmark(const SDEditBenchmarkOptions& options);

}  // namespace flashps::bench
