// Loading a UNet2DConditionModel: from a diffusers folder, or from any checkpoint's tensors (a
// single file's "model.diffusion_model." component in LDM keys, seen through unet_ldm_layout).
#include <filesystem>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "models/loading/checkpoint_tensors.h"
#include "models/loading/config_checks.h"
#include "models/loading/model_files.h"
#include "models/loading/weights.h"
#include "models/unet/unet_ldm_layout.h"
#include "models/unet/unet_model.h"

namespace flashps {
namespace {

// The weights' headers must agree with the config's widths and counts before the model is
// allocated (head counts leave no trace in shapes; their bounds and divisibility are checked).
void check_config_against_weights(const UNetConfig& config, const std::string& source, const WeightShapes& weights) {
  const std::vector<int64_t>& channels = config.block_out_channels;
  const auto blocks = static_cast<int64_t>(channels.size());
  weights.require_block_count(source, "block_out_channels (entries)", blocks, "down_blocks");
  weights.require_block_count(source, "block_out_channels (entries)", blocks, "up_blocks");
  weights.require_shape(source, "in_channels and block_out_channels[0]", "conv_in.weight",
                        {channels[0], config.in_channels, 3, 3});
  weights.require_shape(source, "out_channels and block_out_channels[0]", "conv_out.weight",
                        {config.out_channels, channels[0], 3, 3});
  weights.require_shape(source, "block_out_channels[0]", "time_embedding.linear_1.weight",
                        {config.time_embed_dim(), channels[0]});
  if (config.text_time_embedding)
    weights.require_shape(source, "projection_class_embeddings_input_dim", "add_embedding.linear_1.weight",
                          {config.time_embed_dim(), config.projection_class_embeddings_input_dim});
  weights.require_block_count(source, "transformer_layers_per_block (last, the mid block's)",
                              config.transformer_layers.back(), "mid_block.attentions.0.transformer_blocks");
  for (int64_t i = 0; i < blocks; ++i) {
    const std::string down = "down_blocks." + std::to_string(i), up = "up_blocks." + std::to_string(i);
    weights.require_block_count(source, "layers_per_block", config.layers_per_block, down + ".resnets");
    weights.require_block_count(source, "layers_per_block (+1 in up blocks)", config.layers_per_block + 1,
                                up + ".resnets");
    weights.require_shape(source, "block_out_channels", down + ".resnets.0.conv1.weight",
                          {channels[i], channels[std::max<int64_t>(i - 1, 0)], 3, 3});
    if (config.has_cross_attention(i)) {
      weights.require_block_count(source, "transformer_layers_per_block", config.transformer_layers[i],
                                  down + ".attentions.0.transformer_blocks");
      weights.require_shape(source, "cross_attention_dim",
                            down + ".attentions.0.transformer_blocks.0.attn2.to_k.weight",
                            {channels[i], config.cross_attention_dim});
    }
    if (config.up_block_types[i] == "CrossAttnUpBlock2D")
      weights.require_block_count(source, "reverse_transformer_layers_per_block", config.reverse_transformer_layers[i],
                                  up + ".attentions.0.transformer_blocks");
  }
}

}  // namespace

UNet2DConditionModel load_unet(const std::string& dir, at::ScalarType dtype) {
  namespace fs = std::filesystem;
  const fs::path config_path = fs::path(dir) / "config.json";
  if (!fs::exists(config_path)) throw Error(dir + ": UNet folder has no config.json");
  const UNetConfig config = parse_unet_config(read_json_file(config_path.string()), config_path.string());
  return load_unet(*safetensors_tensors(open_component_weights(dir)), config, config_path.string(), dtype);
}

UNet2DConditionModel load_unet(const CheckpointTensors& weights, const UNetConfig& config,
                               const std::string& config_source, at::ScalarType dtype,
                               const WeightLoadOptions& base_options) {
  check_config_against_weights(config, config_source, WeightShapes(weights));
  UNet2DConditionModel model(config);
  WeightLoadOptions options = base_options;
  options.dtype = dtype;
  load_weights_strict(*model, weights, options);
  prefer_fast_linear_layout(*model);
  return model;
}

std::unique_ptr<CheckpointTensors> unet_tensors(std::unique_ptr<CheckpointTensors> stored, const UNetConfig& config) {
  if (!has_ldm_unet_keys(*stored)) return stored;  // diffusers keys (or not a UNet: the loader names the keys)
  KeyLayout layout = unet_ldm_layout(*stored, config);
  return tensors_in_layout(std::move(stored), std::move(layout), "Stable Diffusion (LDM) UNet");
}

}  // namespace flashps
