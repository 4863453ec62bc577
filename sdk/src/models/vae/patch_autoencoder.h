// A fixed, weight-light autoencoder: each p x p pixel patch (3*p*p values, pixel-unshuffle order)
// is projected onto `latent_channels` orthonormal directions (principal components of photo
// patches), normalised as latent = projection (patch - mean) * scaling_factor; decoding is the
// transpose. Without a projection (latent_channels = 3*p*p) it is an exact pixel unshuffle.
// The bundled small model uses 4x4 patches and 16 components: 38.7 dB reconstruction PSNR on its
// training photos at no training cost (see samples/models/flashps-fill-small/MODEL_CARD.md).
//
// vae/config.json: {"_class_name": "FlashPSPatchAutoencoder", "patch_size": 4, "in_channels": 3,
//                   "latent_channels": 16, "scaling_factor": 0.88, "shift_factor": 0.0,
//                   "deblocking": {"block": 8, "edge_threshold": 0.3, "flatness_threshold": 0.05}}
// "deblocking" (optional) smooths small steps at block borders after decoding
// (models/vae/deblocking_filter.h).
// vae/diffusion_pytorch_model.safetensors (when latent_channels < 3*p*p):
//   "projection" [latent_channels, 3*p*p] (orthonormal rows), "mean" [3*p*p]
#pragma once
#include <ATen/Tensor.h>

#include <nlohmann/json_fwd.hpp>

#include "models/loading/checkpoint_tensors.h"
#include "models/vae/deblocking_filter.h"
#include "models/vae/image_autoencoder.h"

namespace flashps {

struct PatchAutoencoderConfig {
  int64_t patch_size = 4;
  int64_t in_channels = 3;
  int64_t latent_channels = 0;  // 0 = 3*p*p (no projection)
  double scaling_factor = 1.0;
  double shift_factor = 0.0;
  DeblockingFilter deblocking;  // off unless the config has "deblocking"

  int64_t patch_values() const { return in_channels * patch_size * patch_size; }
  int64_t channels() const { return latent_channels > 0 ? latent_channels : patch_values(); }
  bool projected() const { return channels() < patch_values(); }
  nlohmann::json to_json() const;
};

// Parses and checks a config; `source` names the file in errors.
PatchAutoencoderConfig parse_patch_autoencoder_config(const nlohmann::json& json, const std::string& source);

class PatchAutoencoder : public ImageAutoencoder {
 public:
  // `projection` [latent_channels, 3*p*p] and `mean` [3*p*p] are required exactly when the config
  // is projected; Error otherwise.
  PatchAutoencoder(PatchAutoencoderConfig config, at::Tensor projection = {}, at::Tensor mean = {});

  const PatchAutoencoderConfig& config() const { return config_; }
  const at::Tensor& projection() const { return projection_; }
  const at::Tensor& mean() const { return mean_; }
  int64_t latent_channels() const override { return config_.channels(); }
  int64_t scale_factor() const override { return config_.patch_size; }
  at::Tensor encode_to_latents(const at::Tensor& image) const override;
  at::Tensor decode_latents(const at::Tensor& latents) const override;  // with the deblocking filter
  at::Tensor decode_latents_unfiltered(const at::Tensor& latents) const;  // the linear decoder alone
  void to_device(at::Device device) override;

 private:
  PatchAutoencoderConfig config_;
  at::Tensor projection_, mean_;  // float32; undefined when not projected
};

// Loads a FlashPSPatchAutoencoder folder (config.json and, when projected, the safetensors).
std::shared_ptr<PatchAutoencoder> load_patch_autoencoder(const std::string& dir);
// Same from a config and tensors (exactly "projection" and "mean" when projected, else none).
std::shared_ptr<PatchAutoencoder> load_patch_autoencoder(const PatchAutoencoderConfig& config,
                                                         const CheckpointTensors& weights);

// Principal components of p x p patches of `images` ([3, H, W] in [-1, 1]): the projection that
// keeps the most variance, and a scaling_factor that gives the latents unit standard deviation.
std::shared_ptr<PatchAutoencoder> fit_patch_autoencoder(const std::vector<at::Tensor>& images, int64_t patch_size,
                                                        int64_t latent_channels);

}  // namespace flashps
