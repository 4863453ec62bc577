#include "models/vae/patch_autoencoder.h"

#include <ATen/ATen.h>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace flashps {

nlohmann::json PatchAutoencoderConfig::to_json() const {
  return {{"_class_name", "FlashPSPatchAutoencoder"},
          {"patch_size", patch_size},
          {"in_channels", in_channels},
          {"scaling_factor", scaling_factor},
          {"shift_factor", shift_factor}};
}

PatchAutoencoderConfig parse_patch_autoencoder_config(const nlohmann::json& json, const std::string& source) {
  PatchAutoencoderConfig config;
  try {
    config.patch_size = json.value("patch_size", config.patch_size);
    config.in_channels = json.value("in_channels", config.in_channels);
    config.scaling_factor = json.value("scaling_factor", config.scaling_factor);
    config.shift_factor = json.value("shift_factor", config.shift_factor);
  } catch (const nlohmann::json::exception& e) {
    throw Error(source + ": " + e.what());
  }
  if (config.patch_size < 1 || config.patch_size > 64)
    throw Error(source + ": patch_size must be between 1 and 64, got " + std::to_string(config.patch_size));
  if (config.in_channels < 1 || config.in_channels > 4)
    throw Error(source + ": in_channels must be between 1 and 4, got " + std::to_string(config.in_channels));
  if (!(config.scaling_factor > 0) || !std::isfinite(config.scaling_factor))
    throw Error(source + ": scaling_factor must be a positive number");
  if (!std::isfinite(config.shift_factor)) throw Error(source + ": shift_factor must be finite");
  return config;
}

at::Tensor PatchAutoencoder::encode_to_latents(const at::Tensor& image) const {
  if (image.dim() != 4 || image.size(1) != config_.in_channels || image.size(2) % config_.patch_size != 0 ||
      image.size(3) % config_.patch_size != 0)
    throw Error("patch autoencoder: expected an image [B, " + std::to_string(config_.in_channels) +
                ", H, W] with H and W multiples of " + std::to_string(config_.patch_size));
  at::Tensor patches = at::pixel_unshuffle(image.to(at::kFloat), config_.patch_size);
  return (patches - config_.shift_factor) * config_.scaling_factor;
}

at::Tensor PatchAutoencoder::decode_latents(const at::Tensor& latents) const {
  if (latents.dim() != 4 || latents.size(1) != latent_channels())
    throw Error("patch autoencoder: expected latents [B, " + std::to_string(latent_channels()) + ", h, w]");
  return at::pixel_shuffle(latents.to(at::kFloat) / config_.scaling_factor + config_.shift_factor,
                           config_.patch_size);
}

}  // namespace flashps
