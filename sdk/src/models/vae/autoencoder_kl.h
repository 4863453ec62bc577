// AutoencoderKL (diffusers v0.32): the VAE of Stable Diffusion 1.x/2.x/XL and Flux. Maps images in
// [-1, 1] to latents and back. Parameter paths equal diffusers' checkpoint keys
// ("encoder.down_blocks.0.resnets.0.conv1.weight"), so loading is strict and by name.
#pragma once
#include <ATen/Tensor.h>
#include <c10/core/ScalarType.h>
#include <torch/nn/module.h>

#include <memory>
#include <optional>
#include <string>

#include "models/loading/checkpoint_tensors.h"
#include "models/loading/weights.h"
#include "models/vae/autoencoder_kl_config.h"
#include "models/vae/image_autoencoder.h"
#include "models/vae/tiled_decode.h"

namespace flashps {

class Conv2dLayer;
namespace vae {
class VaeEncoder;
class VaeDecoder;
}  // namespace vae

// Every method is const and keeps no state between calls, so one instance may serve several
// threads. Inputs of any floating dtype are converted to the model's dtype and device.
class AutoencoderKL : public torch::nn::Module, public ImageAutoencoder {
 public:
  // Parameters are allocated but uninitialised: load them with load_weights_strict (or use
  // load_autoencoder_kl, which does).
  explicit AutoencoderKL(AutoencoderKLConfig config);

  const AutoencoderKLConfig& config() const { return config_; }
  at::ScalarType dtype() const;
  void to_device(at::Device device) override { torch::nn::Module::to(device); }

  // Raw encoder output [B, 2*latent_channels, H/f, W/f] after quant_conv: mean then log-variance
  // (not clamped). `image` is [B, in_channels, H, W] in [-1, 1]. Returned in the model's dtype.
  at::Tensor encode_moments(const at::Tensor& image) const;
  // The posterior mean, the first latent_channels channels of the moments.
  at::Tensor encode_mean(const at::Tensor& image) const;
  // Raw latent [B, latent_channels, h, w] -> image [B, out_channels, h*f, w*f] (post_quant_conv
  // first when configured; not clamped). Returned in the model's dtype.
  at::Tensor decode(const at::Tensor& latent) const;

  // Pipeline helpers, float32 in and out: latents = (mean - shift_factor) * scaling_factor, and
  // the inverse on the way back (decode(latents / scaling_factor + shift_factor)). Latents
  // larger than the decode tiling's threshold are decoded tile by tile (models/vae/tiled_decode.h).
  at::Tensor encode_to_latents(const at::Tensor& image) const override;
  at::Tensor decode_latents(const at::Tensor& latents) const override;

  // Tiled decoding in decode_latents: on by default above 128 latent pixels (1024 image pixels
  // at 8x), where a whole-image decode needs several GB; null turns it off. Set before use.
  void set_decode_tiling(std::optional<DecodeTiling> tiling) { tiling_ = tiling; }
  const std::optional<DecodeTiling>& decode_tiling() const { return tiling_; }

  int64_t latent_channels() const override { return config_.latent_channels; }
  int64_t scale_factor() const override { return config_.downscale_factor(); }

 private:
  at::Tensor to_model_input(const at::Tensor& input, int64_t channels, const char* operation) const;

  AutoencoderKLConfig config_;
  std::shared_ptr<vae::VaeEncoder> encoder_;
  std::shared_ptr<vae::VaeDecoder> decoder_;
  std::shared_ptr<Conv2dLayer> quant_conv_;       // null unless use_quant_conv
  std::shared_ptr<Conv2dLayer> post_quant_conv_;  // null unless use_post_quant_conv
  std::optional<DecodeTiling> tiling_ = DecodeTiling{};
  at::Tensor reference_parameter_;  // encoder.conv_in.weight: tells the model's dtype and device
};

// Loads a diffusers VAE folder: config.json plus diffusion_pytorch_model.safetensors (or its
// .fp16 variant), parameters converted to `dtype`. Throws Error naming the folder or file when
// either is missing or the weights do not match the config.
std::shared_ptr<AutoencoderKL> load_autoencoder_kl(const std::string& model_dir,
                                                   at::ScalarType dtype = at::kFloat);

// Same with an explicit config and weights file (fixtures, renamed checkpoints).
std::shared_ptr<AutoencoderKL> load_autoencoder_kl(const AutoencoderKLConfig& config,
                                                   const std::string& weights_path,
                                                   at::ScalarType dtype = at::kFloat);

// Same from tensors in diffusers' keys (after autoencoder_tensors), checking `config` (read from
// `config_source`, named in errors) against their shapes first; the loaders above are this one.
// `options` pass through to the strict loader; its dtype is replaced by `dtype`.
std::shared_ptr<AutoencoderKL> load_autoencoder_kl(const CheckpointTensors& weights, const AutoencoderKLConfig& config,
                                                   const std::string& config_source, at::ScalarType dtype,
                                                   const WeightLoadOptions& options = {});

// `stored` in diffusers' keys: an autoencoder in the original latent-diffusion keys (single-file
// Stable Diffusion's first_stage_model, Flux's ae.safetensors) is seen through
// autoencoder_ldm_layout; anything else is returned unchanged.
std::unique_ptr<CheckpointTensors> autoencoder_tensors(std::unique_ptr<CheckpointTensors> stored,
                                                       const AutoencoderKLConfig& config);

}  // namespace flashps
