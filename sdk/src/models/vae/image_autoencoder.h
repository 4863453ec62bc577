// What a latent-diffusion pipeline needs from its autoencoder: images in [-1, 1] to normalised
// latents and back, and the latent geometry. Implemented by AutoencoderKL (diffusers) and by
// PatchAutoencoder (a fixed, exact pixel-unshuffle used by the bundled small model).
#pragma once
#include <ATen/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "models/loading/checkpoint_tensors.h"
#include "models/loading/weights.h"

namespace flashps {

class ImageAutoencoder {
 public:
  virtual ~ImageAutoencoder() = default;

  virtual int64_t latent_channels() const = 0;
  // Image pixels per latent pixel along each axis.
  virtual int64_t scale_factor() const = 0;

  // image [B, 3, H, W] in [-1, 1] -> latents [B, latent_channels, H/f, W/f], float32, already
  // shifted and scaled the way the diffusion model was trained.
  virtual at::Tensor encode_to_latents(const at::Tensor& image) const = 0;
  // The inverse: latents -> image [B, 3, H, W] in about [-1, 1] (not clamped), float32.
  virtual at::Tensor decode_latents(const at::Tensor& latents) const = 0;
  // Moves the weights to `device`; encode/decode then take and return tensors there.
  virtual void to_device(at::Device device) = 0;
};

// The dtype a pipeline whose denoiser runs in `model_dtype` loads its autoencoder in, as diffusers
// does: bf16 pipelines keep the VAE in bf16 (float32's range, 2x the convolution speed on CPUs
// with bf16 instructions); float16 ones upcast to float32 (diffusers' force_upcast: SD VAEs
// overflow float16's range), and float32 stays float32.
at::ScalarType autoencoder_dtype_for(at::ScalarType model_dtype);

// Loads <dir>/config.json and dispatches on "_class_name" ("AutoencoderKL" or
// "FlashPSPatchAutoencoder"); throws Error naming the folder on anything else.
std::shared_ptr<ImageAutoencoder> load_image_autoencoder(const std::string& dir,
                                                         at::ScalarType dtype = at::kFloat);

// Same from a parsed config (read from `config_source`, named in errors) and tensors in the
// model's keys (after autoencoder_tensors). `options` pass through to the strict loader (dtype
// replaced by `dtype`).
std::shared_ptr<ImageAutoencoder> load_image_autoencoder(const CheckpointTensors& weights,
                                                         const nlohmann::json& config,
                                                         const std::string& config_source, at::ScalarType dtype,
                                                         const WeightLoadOptions& options = {});

}  // namespace flashps
