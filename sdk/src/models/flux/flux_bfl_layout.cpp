#include "models/flux/flux_bfl_layout.h"

#include <regex>

#include "core/diagnostics/error.h"

namespace flashps {
namespace {

using Transform = KeyPiece::Transform;

// Module renames outside the blocks: BFL name -> diffusers name (".weight"/".bias" follow).
const std::pair<const char*, const char*> kTopLevel[] = {
    {"img_in", "x_embedder"},
    {"txt_in", "context_embedder"},
    {"time_in.in_layer", "time_text_embed.timestep_embedder.linear_1"},
    {"time_in.out_layer", "time_text_embed.timestep_embedder.linear_2"},
    {"vector_in.in_layer", "time_text_embed.text_embedder.linear_1"},
    {"vector_in.out_layer", "time_text_embed.text_embedder.linear_2"},
    {"guidance_in.in_layer", "time_text_embed.guidance_embedder.linear_1"},
    {"guidance_in.out_layer", "time_text_embed.guidance_embedder.linear_2"},
    {"final_layer.linear", "proj_out"},
};

// Inside double_blocks.N (-> transformer_blocks.N).
const std::pair<const char*, const char*> kDoubleBlock[] = {
    {"img_mod.lin", "norm1.linear"},
    {"txt_mod.lin", "norm1_context.linear"},
    {"img_attn.proj", "attn.to_out.0"},
    {"txt_attn.proj", "attn.to_add_out"},
    {"img_attn.norm.query_norm.scale", "attn.norm_q.weight"},
    {"img_attn.norm.key_norm.scale", "attn.norm_k.weight"},
    {"txt_attn.norm.query_norm.scale", "attn.norm_added_q.weight"},
    {"txt_attn.norm.key_norm.scale", "attn.norm_added_k.weight"},
    {"img_mlp.0", "ff.net.0.proj"},
    {"img_mlp.2", "ff.net.2"},
    {"txt_mlp.0", "ff_context.net.0.proj"},
    {"txt_mlp.2", "ff_context.net.2"},
};

// Inside single_blocks.N (-> single_transformer_blocks.N).
const std::pair<const char*, const char*> kSingleBlock[] = {
    {"linear2", "proj_out"},
    {"modulation.lin", "norm.linear"},
    {"norm.query_norm.scale", "attn.norm_q.weight"},
    {"norm.key_norm.scale", "attn.norm_k.weight"},
};

// `name` is "<module>.weight" / "<module>.bias" (or a full ".scale" key) of one of `table`'s
// modules: the diffusers key, or "" when it is none of them.
template <size_t N>
std::string rename(const std::string& name, const std::pair<const char*, const char*> (&table)[N]) {
  for (const auto& [bfl, diffusers] : table) {
    const std::string module = bfl;
    if (name == module) return diffusers;  // a full key (norm scales)
    for (const char* suffix : {".weight", ".bias"}) {
      if (name == module + suffix) return std::string(diffusers) + suffix;
    }
  }
  return "";
}

}  // namespace

bool has_flux_bfl_keys(const CheckpointTensors& stored, const std::string& prefix) {
  const auto& entries = stored.entries();
  return entries.count(prefix + "img_in.weight") && entries.count(prefix + "final_layer.linear.weight") &&
         (entries.count(prefix + "double_blocks.0.img_attn.qkv.weight") ||
          entries.count(prefix + "single_blocks.0.linear1.weight"));
}

KeyLayout flux_bfl_layout(const CheckpointTensors& stored, const std::string& prefix) {
  const auto& entries = stored.entries();
  const auto img_in = entries.find(prefix + "img_in.weight");
  if (img_in == entries.end() || img_in->second.shape.size() != 2)
    throw CorruptDataError(stored.source() + ": not a Flux transformer in Black Forest Labs' keys (no " + prefix +
                           "img_in.weight matrix)");
  const int64_t inner = img_in->second.shape[0];
  static const std::regex block_key(R"((double|single)_blocks\.(\d+)\.(.+))");
  KeyLayout layout;
  auto add = [&layout](const std::string& key, const std::string& stored_key, Transform transform = Transform::as_stored,
                       int64_t begin = 0, int64_t end = 0) {
    layout[key] = KeyPiece{stored_key, transform, begin, end};
  };
  for (const auto& [stored_key, entry] : entries) {
    if (stored_key.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string name = stored_key.substr(prefix.size());
    if (std::string key = rename(name, kTopLevel); !key.empty()) {
      add(key, stored_key);
      continue;
    }
    for (const char* suffix : {".weight", ".bias"}) {
      if (name == std::string("final_layer.adaLN_modulation.1") + suffix)
        add(std::string("norm_out.linear") + suffix, stored_key, Transform::swap_halves);
    }
    std::smatch match;
    if (!std::regex_match(name, match, block_key)) continue;
    const std::string index = match[2], inside = match[3];
    const std::string suffix = inside.size() > 7 && inside.substr(inside.size() - 7) == ".weight" ? ".weight"
                               : inside.size() > 5 && inside.substr(inside.size() - 5) == ".bias" ? ".bias"
                                                                                                  : "";
    const std::string module = inside.substr(0, inside.size() - suffix.size());
    if (match[1] == "double") {
      const std::string block = "transformer_blocks." + index + ".";
      if (std::string key = rename(inside, kDoubleBlock); !key.empty()) {
        add(block + key, stored_key);
      } else if (!suffix.empty() && (module == "img_attn.qkv" || module == "txt_attn.qkv")) {
        const bool image = module == "img_attn.qkv";
        const char* names[3] = {image ? "to_q" : "add_q_proj", image ? "to_k" : "add_k_proj",
                                image ? "to_v" : "add_v_proj"};
        for (int part = 0; part < 3; ++part)
          add(block + "attn." + names[part] + suffix, stored_key, Transform::rows, part * inner, (part + 1) * inner);
      }
    } else {
      const std::string block = "single_transformer_blocks." + index + ".";
      if (std::string key = rename(inside, kSingleBlock); !key.empty()) {
        add(block + key, stored_key);
      } else if (!suffix.empty() && module == "linear1" && !entry.shape.empty()) {
        const char* names[3] = {"attn.to_q", "attn.to_k", "attn.to_v"};
        for (int part = 0; part < 3; ++part)
          add(block + names[part] + suffix, stored_key, Transform::rows, part * inner, (part + 1) * inner);
        add(block + "proj_mlp" + suffix, stored_key, Transform::rows, 3 * inner, entry.shape[0]);
      }
    }
  }
  return layout;
}

}  // namespace flashps
