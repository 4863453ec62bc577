#include "models/random/random_layouts.h"

#include "core/diagnostics/error.h"
#include "models/flux/flux_bfl_layout.h"
#include "models/loading/layout_writer.h"

namespace flashps {

KeyLayout flux_bfl_layout_for_writing(const FluxConfig& config, const TensorShapes& model_shapes,
                                      const std::string& prefix) {
  // flux_bfl_layout reads two shapes: img_in's rows (the inner width) and linear1's rows (where
  // the MLP input ends); the other stored shapes follow from the model's (stored_tensor_recipes).
  const int64_t inner = config.inner_dim();
  const auto mlp = model_shapes.find("single_transformer_blocks.0.proj_mlp.weight");
  const int64_t mlp_rows = mlp == model_shapes.end() ? 0 : mlp->second.at(0);
  TensorShapes stored;
  auto add_module = [&](const std::string& module, std::vector<int64_t> shape = {1}) {
    stored[prefix + module + ".weight"] = shape;
    stored[prefix + module + ".bias"] = {shape.at(0)};
  };
  add_module("img_in", {inner, config.in_channels});
  for (const char* module : {"txt_in", "time_in.in_layer", "time_in.out_layer", "vector_in.in_layer",
                             "vector_in.out_layer", "final_layer.linear", "final_layer.adaLN_modulation.1"})
    add_module(module);
  if (config.guidance_embeds)
    for (const char* module : {"guidance_in.in_layer", "guidance_in.out_layer"}) add_module(module);
  for (int64_t i = 0; i < config.num_layers; ++i) {
    const std::string block = "double_blocks." + std::to_string(i) + ".";
    for (const char* stream : {"img", "txt"}) {
      const std::string s = stream;
      for (const std::string module : {"_mod.lin", "_attn.qkv", "_attn.proj", "_mlp.0", "_mlp.2"})
        add_module(block + s + module);
      stored[prefix + block + s + "_attn.norm.query_norm.scale"] = {config.attention_head_dim};
      stored[prefix + block + s + "_attn.norm.key_norm.scale"] = {config.attention_head_dim};
    }
  }
  for (int64_t i = 0; i < config.num_single_layers; ++i) {
    const std::string block = "single_blocks." + std::to_string(i) + ".";
    add_module(block + "linear1", {3 * inner + mlp_rows, inner});
    add_module(block + "linear2");
    add_module(block + "modulation.lin");
    stored[prefix + block + "norm.query_norm.scale"] = {config.attention_head_dim};
    stored[prefix + block + "norm.key_norm.scale"] = {config.attention_head_dim};
  }
  return flux_bfl_layout(*shapes_only_tensors(stored, "the Flux file being written"), prefix);
}

}  // namespace flashps
