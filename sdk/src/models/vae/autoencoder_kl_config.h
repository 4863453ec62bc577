// AutoencoderKL configuration, parsed from a diffusers `vae/config.json`.
#pragma once
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace flashps {

struct AutoencoderKLConfig {
  int64_t in_channels = 3;
  int64_t out_channels = 3;
  std::vector<int64_t> block_out_channels;  // one entry per down block (and, reversed, up block)
  int64_t layers_per_block = 1;             // resnets per down block; up blocks have one more
  int64_t latent_channels = 4;
  int64_t norm_num_groups = 32;
  double scaling_factor = 0.18215;
  double shift_factor = 0.0;  // null in SD configs, 0.0609 for Flux
  bool use_quant_conv = true;
  bool use_post_quant_conv = true;
  bool mid_block_add_attention = true;
  bool force_upcast = true;  // diffusers runs such VAEs in float32 when the pipeline is float16
  int64_t sample_size = 32;

  // Image pixels per latent pixel along each axis: one stride-2 downsample per block but the last.
  int64_t downscale_factor() const;
};

// Validates and converts a parsed config.json. Required keys: in_channels, out_channels,
// block_out_channels, layers_per_block, latent_channels, norm_num_groups, scaling_factor; the rest
// take diffusers' defaults; unknown keys are ignored. Throws Error("<source_name>: ...") naming the
// offending key.
AutoencoderKLConfig parse_autoencoder_kl_config(const nlohmann::json& config,
                                                const std::string& source_name);

// Reads and parses a config.json file.
AutoencoderKLConfig read_autoencoder_kl_config(const std::string& path);

}  // namespace flashps
