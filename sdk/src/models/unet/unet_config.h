// UNet2DConditionModel config (diffusers v0.32) for SD 1.x, SD 2.x and SDXL, inpainting (9
// input channels) or not (4). Per-block lists are expanded: attention heads per down block (SD
// configs call the head count "attention_head_dim"), transformer layers per down block.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace flashps {

struct UNetConfig {
  int64_t in_channels = 4, out_channels = 4;
  std::vector<std::string> down_block_types, up_block_types;
  std::vector<int64_t> block_out_channels;
  int64_t layers_per_block = 2;
  int64_t norm_num_groups = 32;
  double norm_eps = 1e-5;
  int64_t cross_attention_dim = 768;
  std::vector<int64_t> attention_heads;          // per down block
  std::vector<int64_t> transformer_layers;       // per down block
  std::vector<int64_t> reverse_transformer_layers;  // per up block
  bool use_linear_projection = false;
  bool flip_sin_to_cos = true;
  double freq_shift = 0;
  // SDXL: "text_time" added embeddings of the pooled text embedding and the micro-conditioning.
  bool text_time_embedding = false;
  int64_t addition_time_embed_dim = 0, projection_class_embeddings_input_dim = 0;

  int64_t time_embed_dim() const { return block_out_channels.front() * 4; }
  bool has_cross_attention(size_t down_block) const { return down_block_types[down_block] == "CrossAttnDownBlock2D"; }
};

// Throws Error naming `source_name` for missing keys and for options this build lacks (other
// block types, class embeddings, dual/only cross-attention, a channel count other than 4 or 9).
UNetConfig parse_unet_config(const nlohmann::json& config, const std::string& source_name);

}  // namespace flashps
