#include "models/vae/autoencoder_ldm_layout.h"

#include <regex>

namespace flashps {
namespace {

bool ldm_vae_starts_with(const std::string& text, const std::string& head) {
  return text.compare(0, head.size(), head) == 0;
}

// Inside a resnet: only the shortcut is renamed.
std::string ldm_vae_resnet(const std::string& inside) {
  return ldm_vae_starts_with(inside, "nin_shortcut.") ? "conv_shortcut." + inside.substr(13) : inside;
}

}  // namespace

bool has_ldm_autoencoder_keys(const CheckpointTensors& stored) {
  const auto& entries = stored.entries();
  return entries.count("encoder.conv_in.weight") &&
         (entries.count("encoder.mid.block_1.conv1.weight") || entries.count("encoder.down.0.block.0.conv1.weight"));
}

KeyLayout autoencoder_ldm_layout(const CheckpointTensors& stored, const AutoencoderKLConfig& config) {
  static const std::regex level_key(R"((encoder\.down|decoder\.up)\.(\d{1,6})\.(block\.(\d{1,6})|downsample|upsample)\.(.+))");
  static const std::regex mid_key(R"((encoder|decoder)\.mid\.(block_1|block_2|attn_1)\.(.+))");
  static const std::pair<const char*, const char*> attention[] = {
      {"q.", "to_q."}, {"k.", "to_k."}, {"v.", "to_v."}, {"proj_out.", "to_out.0."}, {"norm.", "group_norm."}};
  const int64_t levels = static_cast<int64_t>(config.block_out_channels.size());
  KeyLayout layout;
  for (const auto& [stored_key, entry] : stored.entries()) {
    std::smatch match;
    std::string key;
    KeyPiece::Transform transform = KeyPiece::Transform::as_stored;
    if (std::regex_match(stored_key, match, level_key)) {
      const bool encoder = match[1] == "encoder.down";
      const int64_t level = std::stoll(match[2]);
      const std::string part = match[3], inside = match[5];
      if (level >= levels) continue;  // beyond the config's levels: the loader names it
      const std::string block = encoder ? "encoder.down_blocks." + std::to_string(level) + "."
                                        : "decoder.up_blocks." + std::to_string(levels - 1 - level) + ".";
      if (match[4].matched) key = block + "resnets." + std::string(match[4]) + "." + ldm_vae_resnet(inside);
      else if (part == (encoder ? "downsample" : "upsample") && ldm_vae_starts_with(inside, "conv."))
        key = block + (encoder ? "downsamplers.0." : "upsamplers.0.") + inside;
    } else if (std::regex_match(stored_key, match, mid_key)) {
      const std::string mid = std::string(match[1]) + ".mid_block.", part = match[2], inside = match[3];
      if (part != "attn_1") {
        key = mid + (part == "block_1" ? "resnets.0." : "resnets.1.") + ldm_vae_resnet(inside);
      } else {
        for (const auto& [ldm, diffusers] : attention) {
          if (!ldm_vae_starts_with(inside, ldm)) continue;
          key = mid + "attentions.0." + diffusers + inside.substr(std::string(ldm).size());
          // Linear weights stored as 1x1 convolution kernels; some files store matrices already.
          if (std::string(ldm) != "norm." && entry.shape.size() == 4) transform = KeyPiece::Transform::squeeze_1x1;
        }
      }
    } else {
      for (const char* coder : {"encoder.", "decoder."}) {
        if (stored_key == std::string(coder) + "norm_out.weight" || stored_key == std::string(coder) + "norm_out.bias")
          key = coder + std::string("conv_norm_out.") + stored_key.substr(std::string(coder).size() + 9);
        for (const char* kept : {"conv_in.", "conv_out."})
          if (ldm_vae_starts_with(stored_key, std::string(coder) + kept)) key = stored_key;
      }
      for (const char* kept : {"quant_conv.", "post_quant_conv."})
        if (ldm_vae_starts_with(stored_key, kept)) key = stored_key;
    }
    if (!key.empty()) layout[key] = KeyPiece{stored_key, transform};
  }
  return layout;
}

}  // namespace flashps
