// FluxTransformer2DModel configuration, read from a diffusers config.json.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace flashps {

struct FluxConfig {
  int64_t patch_size = 1;
  int64_t in_channels = 64;
  int64_t out_channels = 64;  // config null -> in_channels
  int64_t num_layers = 19;         // double-stream blocks
  int64_t num_single_layers = 38;  // single-stream blocks
  int64_t attention_head_dim = 128;
  int64_t num_attention_heads = 24;
  int64_t joint_attention_dim = 4096;
  int64_t pooled_projection_dim = 768;
  bool guidance_embeds = false;
  std::vector<int64_t> axes_dims_rope = {16, 56, 56};

  int64_t inner_dim() const { return attention_head_dim * num_attention_heads; }
  int64_t block_count() const { return num_layers + num_single_layers; }
  // FLUX.1-Fill: 64 latent channels + 320 conditioning (masked-image latents + packed mask).
  bool is_fill() const { return in_channels == 384 && out_channels == 64; }

  // `source` names the file in errors; validates that dimensions are consistent.
  static FluxConfig from_json(const nlohmann::json& json, const std::string& source);
  nlohmann::json to_json() const;
};

}  // namespace flashps
