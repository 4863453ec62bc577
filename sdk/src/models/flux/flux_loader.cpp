#include <nlohmann/json.hpp>

#include "models/loading/config_checks.h"
#include "models/flux/flux_transformer.h"
#include "models/loading/model_files.h"
#include "models/loading/weights.h"

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
  auto files = open_component_weights(model_dir);
  std::vector<const SafetensorsFile*> views;
  for (const auto& file : files) views.push_back(file.get());
  check_config_against_weights(config, config_source, WeightShapes(views));
  FluxTransformer model(config);
  WeightLoadOptions options;
  options.dtype = dtype;
  load_weights_strict(*model, views, options);
  prefer_fast_linear_layout(*model);
  model->eval();
  return model;
}

}  // namespace flashps
