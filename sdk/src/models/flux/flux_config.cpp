#include "models/flux/flux_config.h"

#include <nlohmann/json.hpp>
#include <numeric>

#include "core/diagnostics/error.h"
#include "models/loading/config_checks.h"

namespace flashps {

FluxConfig FluxConfig::from_json(const nlohmann::json& json, const std::string& source) {
  FluxConfig config;
  try {
    if (json.contains("_class_name") && json["_class_name"] != "FluxTransformer2DModel")
      throw Error(source + ": _class_name is " + json["_class_name"].dump() +
                  ", expected FluxTransformer2DModel");
    config.patch_size = json.value("patch_size", config.patch_size);
    config.in_channels = json.value("in_channels", config.in_channels);
    config.out_channels = json.contains("out_channels") && !json["out_channels"].is_null()
                              ? json["out_channels"].get<int64_t>()
                              : config.in_channels;
    config.num_layers = json.value("num_layers", config.num_layers);
    config.num_single_layers = json.value("num_single_layers", config.num_single_layers);
    config.attention_head_dim = json.value("attention_head_dim", config.attention_head_dim);
    config.num_attention_heads = json.value("num_attention_heads", config.num_attention_heads);
    config.joint_attention_dim = json.value("joint_attention_dim", config.joint_attention_dim);
    config.pooled_projection_dim = json.value("pooled_projection_dim", config.pooled_projection_dim);
    config.guidance_embeds = json.value("guidance_embeds", config.guidance_embeds);
    if (json.contains("axes_dims_rope"))
      config.axes_dims_rope = json["axes_dims_rope"].get<std::vector<int64_t>>();
  } catch (const nlohmann::json::exception& error) {
    throw Error(source + ": invalid FluxTransformer2DModel config: " + error.what());
  }
  // Bounds before anything is allocated from these numbers; FLUX.1 is 384 / 64 channels, 19 + 38
  // blocks, 24 heads of 128, 4096 text and 768 pooled widths, well inside them.
  require_config_range(source, "in_channels", config.in_channels, 1, 16384);
  require_config_range(source, "out_channels", config.out_channels, 1, 16384);
  require_config_range(source, "num_layers", config.num_layers, 0, 1024);
  require_config_range(source, "num_single_layers", config.num_single_layers, 0, 1024);
  require_config_range(source, "attention_head_dim", config.attention_head_dim, 1, 4096);
  require_config_range(source, "num_attention_heads", config.num_attention_heads, 1, 1024);
  require_config_range(source, "attention_head_dim x num_attention_heads", config.inner_dim(), 1, 65536);
  require_config_range(source, "joint_attention_dim", config.joint_attention_dim, 1, 65536);
  require_config_range(source, "pooled_projection_dim", config.pooled_projection_dim, 1, 65536);
  require_config_range(source, "axes_dims_rope entries", static_cast<int64_t>(config.axes_dims_rope.size()), 1, 8);
  for (int64_t axis : config.axes_dims_rope) require_config_range(source, "axes_dims_rope[i]", axis, 0, 4096);
  const int64_t rope_dim =
      std::accumulate(config.axes_dims_rope.begin(), config.axes_dims_rope.end(), int64_t{0});
  if (config.patch_size != 1)
    throw Error(source + ": patch_size " + std::to_string(config.patch_size) +
                " is not supported (Flux packs 2x2 latent patches into channels; use 1)");
  if (config.attention_head_dim <= 0 || config.num_attention_heads <= 0 ||
      config.in_channels <= 0 || config.out_channels <= 0 || config.num_layers < 0 ||
      config.num_single_layers < 0)
    throw Error(source + ": dimensions must be positive");
  if (rope_dim != config.attention_head_dim)
    throw Error(source + ": axes_dims_rope sum to " + std::to_string(rope_dim) +
                " but attention_head_dim is " + std::to_string(config.attention_head_dim));
  for (int64_t axis : config.axes_dims_rope)
    if (axis % 2 != 0) throw Error(source + ": axes_dims_rope entries must be even");
  return config;
}

nlohmann::json FluxConfig::to_json() const {
  return {{"_class_name", "FluxTransformer2DModel"},
          {"patch_size", patch_size},
          {"in_channels", in_channels},
          {"out_channels", out_channels},
          {"num_layers", num_layers},
          {"num_single_layers", num_single_layers},
          {"attention_head_dim", attention_head_dim},
          {"num_attention_heads", num_attention_heads},
          {"joint_attention_dim", joint_attention_dim},
          {"pooled_projection_dim", pooled_projection_dim},
          {"guidance_embeds", guidance_embeds},
          {"axes_dims_rope", axes_dims_rope}};
}

}  // namespace flashps
