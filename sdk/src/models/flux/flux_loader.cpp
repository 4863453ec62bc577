#include <nlohmann/json.hpp>

#include "models/loading/config_checks.h"
#include "models/flux/flux_transformer.h"
#include "models/loading/model_files.h"
#include "models/loading/weights.h"
#include "models/loading/checkpoint_tensors.h"
#include "models/flux/flux_bfl_layout.h"

namespace flashps {
namespace {

// The weights' headers must agree with every size the config gives before the model is
// allocated: each width appears in one of these tensors, and the block counts multiply them.
void check_config_against_weights(const FluxConfig& config, const std::string& source, const WeightShapes& weights) {
  const int64_t inner = config.inner_dim();
  weights.require_block_count(source, "num_layers", config.num_layers, "transformer_blocks");
  weights.require_block_count(source, "num_single_layers", config.num_single_layers, "single_transformer_blocks");
  weights.require_shape(source, "in_channels, num_attention_heads and attention_head_dim", "x_embedder.weight",
                        {inner, config.in_channels});
  weights.require_shape(source, "out_channels", "proj_out.weight", {config.out_channels, inner});
  weights.require_shape(source, "joint_attention_dim", "context_embedder.weight", {inner, config.joint_attention_dim});
  weights.require_shape(source, "pooled_projection_dim", "time_text_embed.text_embedder.linear_1.weight",
                        {inner, config.pooled_projection_dim});
  const std::string first_block = config.num_layers > 0 ? "transformer_blocks.0" : "single_transformer_blocks.0";
  weights.require_shape(source, "attention_head_dim", first_block + ".attn.norm_q.weight", {config.attention_head_dim});
}

}  // namespace

FluxTransformer load_flux_transformer(const std::string& model_dir, at::ScalarType dtype) {
  const std::string config_source = model_dir + "/config.json";
  FluxConfig config = FluxConfig::from_json(read_component_config(model_dir), config_source);
  return load_flux_transformer(*safetensors_tensors(open_component_weights(model_dir)), config, config_source, dtype);
}

FluxTransformer load_flux_transformer(const CheckpointTensors& weights, const FluxConfig& config,
                                      const std::string& config_source, at::ScalarType dtype, bool keep_quantized) {
  check_config_against_weights(config, config_source, WeightShapes(weights));
  FluxTransformer model(config);
  WeightLoadOptions options;
  options.dtype = dtype;
  options.keep_quantized = keep_quantized;
  load_weights_strict(*model, weights, options);
  prefer_fast_linear_layout(*model);
  model->eval();
  return model;
}

std::unique_ptr<CheckpointTensors> flux_transformer_tensors(std::unique_ptr<CheckpointTensors> stored) {
  for (const char* prefix : {"", "model.diffusion_model."}) {
    if (has_flux_bfl_keys(*stored, prefix)) {
      KeyLayout layout = flux_bfl_layout(*stored, prefix);
      return tensors_in_layout(std::move(stored), std::move(layout), "Black Forest Labs Flux");
    }
  }
  return stored;  // diffusers keys (or not a Flux transformer: the loader names the keys)
}

}  // namespace flashps
