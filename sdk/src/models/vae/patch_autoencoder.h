// A fixed autoencoder: each p x p pixel patch becomes 3*p*p latent channels (pixel unshuffle),
// normalised as (x - shift_factor) * scaling_factor. It has no weights and reconstructs exactly.
// The bundled small model uses it because a VAE small and cheap enough for that model loses more
// detail than the model can generate (see samples/models/flashps-fill-small/MODEL_CARD.md).
// config.json: {"_class_name": "FlashPSPatchAutoencoder", "patch_size": 4, "in_channels": 3,
//               "scaling_factor": 2.0, "shift_factor": 0.0}
#pragma once
#include <nlohmann/json_fwd.hpp>

#include "models/vae/image_autoencoder.h"

namespace flashps {

struct PatchAutoencoderConfig {
  int64_t patch_size = 4;
  int64_t in_channels = 3;
  double scaling_factor = 1.0;
  double shift_factor = 0.0;

  nlohmann::json to_json() const;
};

// Parses and checks a config; `source` names the file in errors.
PatchAutoencoderConfig parse_patch_autoencoder_config(const nlohmann::json& json, const std::string& source);

class PatchAutoencoder : public ImageAutoencoder {
 public:
  explicit PatchAutoencoder(PatchAutoencoderConfig config) : config_(config) {}

  const PatchAutoencoderConfig& config() const { return config_; }
  int64_t latent_channels() const override { return config_.in_channels * config_.patch_size * config_.patch_size; }
  int64_t scale_factor() const override { return config_.patch_size; }
  at::Tensor encode_to_latents(const at::Tensor& image) const override;
  at::Tensor decode_latents(const at::Tensor& latents) const override;

 private:
  PatchAutoencoderConfig config_;
};

}  // namespace flashps
