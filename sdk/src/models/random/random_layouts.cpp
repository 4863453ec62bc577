#include "models/random/random_layouts.h"

#include <regex>

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

KeyLayout unet_ldm_layout_for_writing(const TensorShapes& model_shapes) {
  static const std::regex level_key(R"((down|up)_blocks\.(\d+)\.(resnets|attentions|downsamplers|upsamplers)\.(\d+)\.(.+))");
  static const std::regex mid_key(R"(mid_block\.(resnets|attentions)\.(\d+)\.(.+))");
  static const std::pair<const char*, const char*> resnet_names[] = {
      {"norm1.", "in_layers.0."}, {"conv1.", "in_layers.2."}, {"time_emb_proj.", "emb_layers.1."},
      {"norm2.", "out_layers.0."}, {"conv2.", "out_layers.3."}, {"conv_shortcut.", "skip_connection."}};
  static const std::pair<const char*, const char*> top_level[] = {
      {"conv_in.", "input_blocks.0.0."}, {"time_embedding.linear_1.", "time_embed.0."},
      {"time_embedding.linear_2.", "time_embed.2."}, {"add_embedding.linear_1.", "label_emb.0.0."},
      {"add_embedding.linear_2.", "label_emb.0.2."}, {"conv_norm_out.", "out.0."}, {"conv_out.", "out.2."}};
  auto resnet = [](const std::string& inside) {
    for (const auto& [diffusers, ldm] : resnet_names)
      if (inside.rfind(diffusers, 0) == 0) return ldm + inside.substr(std::string(diffusers).size());
    return inside;
  };
  int64_t layers = 0;  // resnets per down level
  while (model_shapes.count("down_blocks.0.resnets." + std::to_string(layers) + ".conv1.weight")) ++layers;
  auto has_attention = [&model_shapes](const std::string& block) {
    const auto found = model_shapes.lower_bound(block + "attentions.");
    return found != model_shapes.end() && found->first.rfind(block + "attentions.", 0) == 0;
  };
  KeyLayout layout;
  for (const auto& [key, shape] : model_shapes) {
    std::smatch match;
    std::string stored = key;
    if (std::regex_match(key, match, level_key)) {
      const bool down = match[1] == "down";
      const int64_t level = std::stoll(match[2]), index = std::stoll(match[4]);
      const std::string part = match[3], inside = match[5];
      const int64_t first = level * (layers + 1) + (down ? 1 : 0);
      const std::string blocks = down ? "input_blocks." : "output_blocks.";
      if (part == "resnets") stored = blocks + std::to_string(first + index) + ".0." + resnet(inside);
      else if (part == "attentions") stored = blocks + std::to_string(first + index) + ".1." + inside;
      else if (part == "downsamplers") stored = blocks + std::to_string((level + 1) * (layers + 1)) + ".0." +
                                                (inside.rfind("conv.", 0) == 0 ? "op." + inside.substr(5) : inside);
      else stored = blocks + std::to_string(first + layers) +
                    (has_attention("up_blocks." + std::string(match[2]) + ".") ? ".2." : ".1.") + inside;
    } else if (std::regex_match(key, match, mid_key)) {
      const std::string inside = match[3];
      stored = match[1] == "attentions" ? "middle_block.1." + inside
                                        : "middle_block." + std::string(match[2] == "0" ? "0." : "2.") + resnet(inside);
    } else {
      for (const auto& [diffusers, ldm] : top_level)
        if (key.rfind(diffusers, 0) == 0) stored = ldm + key.substr(std::string(diffusers).size());
    }
    layout[key] = KeyPiece{stored};
  }
  return layout;
}

KeyLayout open_clip_layout_for_writing(const TensorShapes& model_shapes) {
  static const std::regex layer_key(R"(text_model\.encoder\.layers\.(\d+)\.(.+))");
  static const std::pair<const char*, const char*> layer_names[] = {
      {"self_attn.out_proj.", "attn.out_proj."}, {"layer_norm1.", "ln_1."}, {"layer_norm2.", "ln_2."},
      {"mlp.fc1.", "mlp.c_fc."}, {"mlp.fc2.", "mlp.c_proj."}};
  static const std::pair<const char*, const char*> top_level[] = {
      {"text_model.embeddings.token_embedding.weight", "token_embedding.weight"},
      {"text_model.embeddings.position_embedding.weight", "positional_embedding"},
      {"text_model.final_layer_norm.weight", "ln_final.weight"},
      {"text_model.final_layer_norm.bias", "ln_final.bias"}};
  KeyLayout layout;
  for (const auto& [key, shape] : model_shapes) {
    std::smatch match;
    KeyPiece piece{key};
    if (key == "text_projection.weight") {
      piece = KeyPiece{"text_projection", KeyPiece::Transform::transpose};
    } else if (std::regex_match(key, match, layer_key)) {
      const std::string block = "transformer.resblocks." + std::string(match[1]) + ".", inside = match[2];
      static const std::regex projection(R"(self_attn\.([qkv])_proj\.(weight|bias))");
      std::smatch part;
      if (std::regex_match(inside, part, projection)) {
        const int64_t width = shape.at(0), index = part[1] == "q" ? 0 : part[1] == "k" ? 1 : 2;
        piece = KeyPiece{block + "attn.in_proj_" + std::string(part[2]), KeyPiece::Transform::rows, index * width,
                         (index + 1) * width};
      } else {
        for (const auto& [hf, open_clip] : layer_names)
          if (inside.rfind(hf, 0) == 0) piece.stored_key = block + open_clip + inside.substr(std::string(hf).size());
      }
    } else {
      for (const auto& [hf, open_clip] : top_level)
        if (key == hf) piece.stored_key = open_clip;
    }
    layout[key] = piece;
  }
  return layout;
}

KeyLayout autoencoder_ldm_layout_for_writing(const TensorShapes& model_shapes, int64_t levels) {
  static const std::regex level_key(R"((encoder|decoder)\.(down|up)_blocks\.(\d+)\.(resnets\.(\d+)|downsamplers\.0|upsamplers\.0)\.(.+))");
  static const std::regex mid_key(R"((encoder|decoder)\.mid_block\.(resnets\.([01])|attentions\.0)\.(.+))");
  static const std::pair<const char*, const char*> attention[] = {
      {"to_q.", "q."}, {"to_k.", "k."}, {"to_v.", "v."}, {"to_out.0.", "proj_out."}, {"group_norm.", "norm."}};
  auto resnet_inside = [](const std::string& inside) {
    return inside.rfind("conv_shortcut.", 0) == 0 ? "nin_shortcut." + inside.substr(14) : inside;
  };
  KeyLayout layout;
  for (const auto& [key, shape] : model_shapes) {
    std::smatch match;
    KeyPiece piece{key};
    if (std::regex_match(key, match, level_key)) {
      const bool encoder = match[1] == "encoder";
      const int64_t level = std::stoll(match[3]);
      const std::string block = std::string(match[1]) + (encoder ? ".down." : ".up.") +
                                std::to_string(encoder ? level : levels - 1 - level) + ".";
      piece.stored_key = match[5].matched ? block + "block." + std::string(match[5]) + "." + resnet_inside(match[6])
                                          : block + (encoder ? "downsample." : "upsample.") + std::string(match[6]);
    } else if (std::regex_match(key, match, mid_key)) {
      const std::string mid = std::string(match[1]) + ".mid.", inside = match[4];
      if (match[3].matched) {
        piece.stored_key = mid + (match[3] == "0" ? "block_1." : "block_2.") + resnet_inside(inside);
      } else {
        for (const auto& [diffusers, ldm] : attention) {
          if (inside.rfind(diffusers, 0) != 0) continue;
          piece.stored_key = mid + "attn_1." + ldm + inside.substr(std::string(diffusers).size());
          if (std::string(ldm) != "norm." && shape.size() == 2) piece.transform = KeyPiece::Transform::squeeze_1x1;
        }
      }
    } else {
      for (const char* coder : {"encoder.", "decoder."})
        if (key.rfind(std::string(coder) + "conv_norm_out.", 0) == 0)
          piece.stored_key = coder + std::string("norm_out.") + key.substr(std::string(coder).size() + 14);
    }
    layout[key] = piece;
  }
  return layout;
}

}  // namespace flashps
