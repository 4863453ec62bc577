#include "models/unet/unet_ldm_layout.h"

#include <regex>

namespace flashps {
namespace {

// A resnet's modules: LDM name -> diffusers name.
const std::pair<const char*, const char*> kLdmResnet[] = {
    {"in_layers.0.", "norm1."},         {"in_layers.2.", "conv1."},  {"emb_layers.1.", "time_emb_proj."},
    {"out_layers.0.", "norm2."},        {"out_layers.3.", "conv2."}, {"skip_connection.", "conv_shortcut."},
};

// Modules outside the blocks.
const std::pair<const char*, const char*> kLdmUNetTopLevel[] = {
    {"time_embed.0.", "time_embedding.linear_1."}, {"time_embed.2.", "time_embedding.linear_2."},
    {"label_emb.0.0.", "add_embedding.linear_1."}, {"label_emb.0.2.", "add_embedding.linear_2."},
    {"out.0.", "conv_norm_out."},                  {"out.2.", "conv_out."},
};

bool ldm_unet_starts_with(const std::string& text, const std::string& head) { return text.compare(0, head.size(), head) == 0; }

// `rest` (the key inside one module) renamed by `table`, or "" when no entry matches.
template <size_t N>
std::string ldm_unet_rename(const std::string& rest, const std::pair<const char*, const char*> (&table)[N]) {
  for (const auto& [ldm, diffusers] : table)
    if (ldm_unet_starts_with(rest, ldm)) return diffusers + rest.substr(std::string(ldm).size());
  return "";
}

}  // namespace

bool has_ldm_unet_keys(const CheckpointTensors& stored) {
  const auto& entries = stored.entries();
  return entries.count("input_blocks.0.0.weight") && entries.count("time_embed.0.weight");
}

KeyLayout unet_ldm_layout(const CheckpointTensors& stored, const UNetConfig& config) {
  static const std::regex block_key(R"((input_blocks|output_blocks)\.(\d{1,6})\.(\d)\.(.+))");
  static const std::regex middle_key(R"(middle_block\.(\d)\.(.+))");
  const int64_t levels = static_cast<int64_t>(config.block_out_channels.size());
  const int64_t per_level = config.layers_per_block + 1;  // input blocks with the downsampler; output blocks
  KeyLayout layout;
  for (const auto& [stored_key, entry] : stored.entries()) {
    std::string key = ldm_unet_rename(stored_key, kLdmUNetTopLevel);
    std::smatch match;
    if (key.empty() && std::regex_match(stored_key, match, middle_key)) {
      const std::string module = match[1], inside = match[2], resnet = ldm_unet_rename(inside, kLdmResnet);
      if (module == "1") key = "mid_block.attentions.0." + inside;
      else if ((module == "0" || module == "2") && !resnet.empty())
        key = std::string("mid_block.resnets.") + (module == "0" ? "0." : "1.") + resnet;
    } else if (key.empty() && std::regex_match(stored_key, match, block_key)) {
      const bool input = match[1] == "input_blocks";
      const int64_t block = std::stoll(match[2]);
      const std::string module = match[3], inside = match[4];
      if (input && block == 0) {
        if (module == "0") key = "conv_in." + inside;
      } else {
        const int64_t index = input ? block - 1 : block;  // input block 0 is conv_in
        const int64_t level = index / per_level, layer = index % per_level;
        const std::string resnet = ldm_unet_rename(inside, kLdmResnet);
        const bool attention = input ? level < levels && config.has_cross_attention(size_t(level))
                                     : level < levels && config.up_block_types[size_t(level)] == "CrossAttnUpBlock2D";
        const std::string prefix = std::string(input ? "down_blocks." : "up_blocks.") + std::to_string(level) + ".";
        const bool last_level = level == levels - 1;
        if (level >= levels) {
          // beyond the config's levels: left unmapped, the loader names it
        } else if (input && layer == config.layers_per_block) {
          if (!last_level && module == "0" && ldm_unet_starts_with(inside, "op."))
            key = prefix + "downsamplers.0.conv." + inside.substr(3);
        } else if (module == "0" && !resnet.empty()) {
          key = prefix + "resnets." + std::to_string(layer) + "." + resnet;
        } else if (module == "1" && attention) {
          key = prefix + "attentions." + std::to_string(layer) + "." + inside;
        } else if (!input && !last_level && layer == config.layers_per_block && module == (attention ? "2" : "1") &&
                   ldm_unet_starts_with(inside, "conv.")) {
          key = prefix + "upsamplers.0." + inside;
        }
      }
    }
    if (!key.empty()) layout[key] = KeyPiece{stored_key};
  }
  return layout;
}

}  // namespace flashps
