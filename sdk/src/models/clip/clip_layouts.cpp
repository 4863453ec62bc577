#include "models/clip/clip_layouts.h"

#include <regex>

namespace flashps {
namespace {

bool clip_starts_with(const std::string& text, const std::string& head) {
  return text.compare(0, head.size(), head) == 0;
}

// Inside OpenCLIP's transformer.resblocks.N (-> text_model.encoder.layers.N), but in_proj.
const std::pair<const char*, const char*> kOpenClipLayer[] = {
    {"ln_1.", "layer_norm1."},   {"ln_2.", "layer_norm2."},   {"attn.out_proj.", "self_attn.out_proj."},
    {"mlp.c_fc.", "mlp.fc1."},   {"mlp.c_proj.", "mlp.fc2."},
};

void open_clip_layout(const CheckpointTensors& stored, const ClipTextConfig& config, ClipTextLayout& result) {
  static const std::regex layer_key(R"(transformer\.resblocks\.(\d{1,6})\.(.+))");
  const int64_t dim = config.hidden_size;
  for (const auto& [stored_key, entry] : stored.entries()) {
    std::smatch match;
    if (stored_key == "token_embedding.weight") {
      result.layout["text_model.embeddings.token_embedding.weight"] = {stored_key};
    } else if (stored_key == "positional_embedding") {
      result.layout["text_model.embeddings.position_embedding.weight"] = {stored_key};
    } else if (stored_key == "ln_final.weight" || stored_key == "ln_final.bias") {
      result.layout["text_model.final_layer_norm." + stored_key.substr(9)] = {stored_key};
    } else if (stored_key == "text_projection") {
      if (config.projection_dim > 0) result.layout["text_projection.weight"] = {stored_key, KeyPiece::Transform::transpose};
      else result.dropped.insert(stored_key);
    } else if (stored_key == "logit_scale" || stored_key == "attn_mask") {
      result.dropped.insert(stored_key);
    } else if (std::regex_match(stored_key, match, layer_key)) {
      const std::string layer = match[1], inside = match[2];
      if (std::stoll(layer) >= config.num_hidden_layers) {
        result.dropped.insert(stored_key);
        continue;
      }
      const std::string prefix = "text_model.encoder.layers." + layer + ".";
      for (const auto& [open_clip, hugging_face] : kOpenClipLayer)
        if (clip_starts_with(inside, open_clip))
          result.layout[prefix + hugging_face + inside.substr(std::string(open_clip).size())] = {stored_key};
      for (const char* part : {"weight", "bias"}) {
        if (inside != std::string("attn.in_proj_") + part) continue;
        const char* names[3] = {"q_proj.", "k_proj.", "v_proj."};
        for (int i = 0; i < 3; ++i)
          result.layout[prefix + "self_attn." + names[i] + part] = {stored_key, KeyPiece::Transform::rows, i * dim,
                                                                    (i + 1) * dim};
      }
    }
  }
}

}  // namespace

bool has_open_clip_keys(const CheckpointTensors& stored) {
  const auto& entries = stored.entries();
  return entries.count("token_embedding.weight") && entries.count("transformer.resblocks.0.ln_1.weight");
}

ClipTextLayout clip_text_layout(const CheckpointTensors& stored, const ClipTextConfig& config) {
  ClipTextLayout result;
  if (has_open_clip_keys(stored)) {
    result.name = "OpenCLIP text";
    open_clip_layout(stored, config, result);
    return result;
  }
  result.name = "Hugging Face CLIP text";
  // Single files keep the whole transformers model ("transformer.text_model.*").
  const std::string prefix = stored.entries().count("transformer.text_model.embeddings.token_embedding.weight")
                                 ? "transformer."
                                 : "";
  for (const auto& [stored_key, entry] : stored.entries()) {
    if (!clip_starts_with(stored_key, prefix)) continue;
    const std::string key = stored_key.substr(prefix.size());
    const bool unused_projection = config.projection_dim == 0 && key == "text_projection.weight";
    if (key == "text_model.embeddings.position_ids" || key == "logit_scale" || unused_projection)
      result.dropped.insert(stored_key);
    else if (clip_starts_with(key, "text_model.") || key == "text_projection.weight")
      result.layout[key] = {stored_key};
  }
  return result;
}

}  // namespace flashps

namespace flashps {

std::unique_ptr<CheckpointTensors> clip_text_tensors(std::unique_ptr<CheckpointTensors> stored,
                                                     const ClipTextConfig& config) {
  ClipTextLayout layout = clip_text_layout(*stored, config);
  bool renames = !layout.dropped.empty();
  for (const auto& [key, piece] : layout.layout) renames = renames || key != piece.stored_key || piece.transform != KeyPiece::Transform::as_stored;
  if (!renames) return stored;  // already the model's keys
  return tensors_in_layout(std::move(stored), std::move(layout.layout), layout.name, layout.dropped);
}

}  // namespace flashps
