#include "models/unet/unet_config.h"

#include <nlohmann/json.hpp>

#include "core/diagnostics/error.h"
#include "models/loading/config_checks.h"

namespace flashps {
namespace {

// An int for every down block, or a list of them.
std::vector<int64_t> per_block(const nlohmann::json& value, size_t blocks, const std::string& what,
                               const std::string& source_name) {
  std::vector<int64_t> values;
  if (value.is_number_integer()) {
    values.assign(blocks, value.get<int64_t>());
  } else if (value.is_array()) {
    for (const auto& entry : value) values.push_back(entry.get<int64_t>());
  }
  if (values.size() != blocks) throw Error(source_name + ": '" + what + "' must be an integer or one per down block");
  return values;
}

}  // namespace

UNetConfig parse_unet_config(const nlohmann::json& config, const std::string& source_name) {
  UNetConfig parsed;
  try {
    parsed.in_channels = config.at("in_channels").get<int64_t>();
    parsed.out_channels = config.at("out_channels").get<int64_t>();
    parsed.down_block_types = config.at("down_block_types").get<std::vector<std::string>>();
    parsed.up_block_types = config.at("up_block_types").get<std::vector<std::string>>();
    parsed.block_out_channels = config.at("block_out_channels").get<std::vector<int64_t>>();
    parsed.layers_per_block = config.value("layers_per_block", int64_t(2));
    parsed.norm_num_groups = config.value("norm_num_groups", int64_t(32));
    parsed.norm_eps = config.value("norm_eps", 1e-5);
    parsed.cross_attention_dim = config.at("cross_attention_dim").get<int64_t>();
    parsed.use_linear_projection = config.value("use_linear_projection", false);
    parsed.flip_sin_to_cos = config.value("flip_sin_to_cos", true);
    parsed.freq_shift = config.value("freq_shift", 0.0);
    const size_t blocks = parsed.block_out_channels.size();
    if (blocks == 0 || parsed.down_block_types.size() != blocks || parsed.up_block_types.size() != blocks)
      throw Error(source_name + ": down_block_types, up_block_types and block_out_channels must have one entry per block");
    // diffusers: num_attention_heads = num_attention_heads or attention_head_dim (a naming
    // mistake kept for compatibility: SD configs give the head count as attention_head_dim).
    const auto heads = config.find("num_attention_heads");
    const nlohmann::json& head_value = heads != config.end() && !heads->is_null() ? *heads : config.at("attention_head_dim");
    parsed.attention_heads = per_block(head_value, blocks, "attention_head_dim", source_name);
    parsed.transformer_layers =
        per_block(config.value("transformer_layers_per_block", nlohmann::json(1)), blocks, "transformer_layers_per_block", source_name);
    const auto reverse = config.find("reverse_transformer_layers_per_block");
    if (reverse != config.end() && !reverse->is_null()) {
      parsed.reverse_transformer_layers = per_block(*reverse, blocks, "reverse_transformer_layers_per_block", source_name);
    } else {
      parsed.reverse_transformer_layers.assign(parsed.transformer_layers.rbegin(), parsed.transformer_layers.rend());
    }
    const auto addition = config.find("addition_embed_type");
    if (addition != config.end() && !addition->is_null()) {
      if (*addition != "text_time")
        throw Error(source_name + ": addition_embed_type '" + addition->get<std::string>() + "' is not supported (text_time)");
      parsed.text_time_embedding = true;
      parsed.addition_time_embed_dim = config.at("addition_time_embed_dim").get<int64_t>();
      parsed.projection_class_embeddings_input_dim = config.at("projection_class_embeddings_input_dim").get<int64_t>();
    }
  } catch (const nlohmann::json::exception& error) {
    throw Error(source_name + ": UNet config: " + error.what());
  }
  if (parsed.in_channels != 4 && parsed.in_channels != 9)
    throw Error(source_name + ": in_channels " + std::to_string(parsed.in_channels) +
                " is not supported: 4 (text-to-image, inpainting by latent blending) or 9 (inpainting UNet)");
  for (const std::string& type : parsed.down_block_types)
    if (type != "DownBlock2D" && type != "CrossAttnDownBlock2D") throw Error(source_name + ": down block type '" + type + "' is not supported");
  for (const std::string& type : parsed.up_block_types)
    if (type != "UpBlock2D" && type != "CrossAttnUpBlock2D") throw Error(source_name + ": up block type '" + type + "' is not supported");
  if (config.value("mid_block_type", std::string("UNetMidBlock2DCrossAttn")) != "UNetMidBlock2DCrossAttn")
    throw Error(source_name + ": mid_block_type must be UNetMidBlock2DCrossAttn");
  for (const char* key : {"class_embed_type", "encoder_hid_dim_type", "time_cond_proj_dim"})
    if (config.contains(key) && !config[key].is_null()) throw Error(source_name + ": '" + key + "' is not supported");
  for (const char* key : {"dual_cross_attention", "only_cross_attention"})
    if (config.value(key, false)) throw Error(source_name + ": '" + key + "' is not supported");
  // upcast_attention (SD 2.1) keeps float16 attention scores from overflowing; FlashPS computes
  // them in float32 or bfloat16, whose range is float32's, so it changes nothing here.
  if (config.value("resnet_time_scale_shift", std::string("default")) != "default")
    throw Error(source_name + ": resnet_time_scale_shift must be \"default\"");
  // Bounds before anything is allocated from these numbers (SDXL: [320, 640, 1280], 10
  // transformer layers, 2048 cross-attention width, 2816 added-embedding inputs).
  require_config_range(source_name, "out_channels", parsed.out_channels, 1, 64);
  const auto block_count = static_cast<int64_t>(parsed.block_out_channels.size());
  require_config_range(source_name, "block_out_channels entries", block_count, 1, 8);
  for (int64_t channels : parsed.block_out_channels)
    require_config_range(source_name, "block_out_channels[i]", channels, 1, 16384);
  require_config_range(source_name, "layers_per_block", parsed.layers_per_block, 1, 64);
  require_config_range(source_name, "norm_num_groups", parsed.norm_num_groups, 1, 1024);
  require_config_range(source_name, "cross_attention_dim", parsed.cross_attention_dim, 1, 65536);
  for (int64_t heads : parsed.attention_heads)
    require_config_range(source_name, "attention_head_dim[i]", heads, 1, 1024);
  for (int64_t layers : parsed.transformer_layers)
    require_config_range(source_name, "transformer_layers_per_block[i]", layers, 0, 64);
  for (int64_t layers : parsed.reverse_transformer_layers)
    require_config_range(source_name, "reverse_transformer_layers_per_block[i]", layers, 0, 64);
  if (parsed.text_time_embedding) {
    require_config_range(source_name, "addition_time_embed_dim", parsed.addition_time_embed_dim, 1, 65536);
    require_config_range(source_name, "projection_class_embeddings_input_dim",
                         parsed.projection_class_embeddings_input_dim, 1, 1 << 20);
  }
  for (size_t i = 0; i < parsed.block_out_channels.size(); ++i)
    if (parsed.block_out_channels[i] % parsed.attention_heads[i] || parsed.block_out_channels[i] % parsed.norm_num_groups)
      throw Error(source_name + ": block_out_channels must divide by the head count and norm_num_groups");
  return parsed;
}

}  // namespace flashps
