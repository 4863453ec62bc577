// AutoencoderKL's Encoder and Decoder (diffusers models/autoencoders/vae.py) with their
// DownEncoderBlock2D / UpDecoderBlock2D stages. Parameter paths match diffusers' state_dict.
#pragma once
#include <ATen/Tensor.h>
#include <torch/nn/module.h>

#include <memory>
#include <vector>

#include "models/vae/autoencoder_kl_config.h"
#include "models/vae/vae_blocks.h"

namespace flashps::vae {

// resnets.0 .. resnets.{layers-1}, then downsamplers.0 except in the last block.
class DownEncoderBlock2D : public torch::nn::Module {
 public:
  DownEncoderBlock2D(int64_t in_channels, int64_t out_channels, int64_t num_layers,
                     int64_t num_groups, bool add_downsample);
  at::Tensor forward(const at::Tensor& input) const;

 private:
  std::vector<std::shared_ptr<ResnetBlock2D>> resnets_;
  std::shared_ptr<Downsample2D> downsampler_;  // null in the last block
};

// Image [B, in_channels, H, W] -> moments [B, 2*latent_channels, H/f, W/f] (before quant_conv).
class VaeEncoder : public torch::nn::Module {
 public:
  explicit VaeEncoder(const AutoencoderKLConfig& config);
  at::Tensor forward(const at::Tensor& image) const;

 private:
  std::shared_ptr<Conv2dLayer> conv_in_;
  std::vector<std::shared_ptr<DownEncoderBlock2D>> down_blocks_;
  std::shared_ptr<VaeMidBlock> mid_block_;
  std::shared_ptr<GroupNormLayer> conv_norm_out_;
  std::shared_ptr<Conv2dLayer> conv_out_;
};

// resnets.0 .. resnets.{layers} (one more than the encoder), then upsamplers.0 except in the last.
class UpDecoderBlock2D : public torch::nn::Module {
 public:
  UpDecoderBlock2D(int64_t in_channels, int64_t out_channels, int64_t num_layers,
                   int64_t num_groups, bool add_upsample);
  at::Tensor forward(const at::Tensor& input) const;

 private:
  std::vector<std::shared_ptr<ResnetBlock2D>> resnets_;
  std::shared_ptr<Upsample2D> upsampler_;  // null in the last block
};

// Latent [B, latent_channels, h, w] (after post_quant_conv) -> image [B, out_channels, h*f, w*f].
class VaeDecoder : public torch::nn::Module {
 public:
  explicit VaeDecoder(const AutoencoderKLConfig& config);
  at::Tensor forward(const at::Tensor& latent) const;

 private:
  std::shared_ptr<Conv2dLayer> conv_in_;
  std::shared_ptr<VaeMidBlock> mid_block_;
  std::vector<std::shared_ptr<UpDecoderBlock2D>> up_blocks_;
  std::shared_ptr<GroupNormLayer> conv_norm_out_;
  std::shared_ptr<Conv2dLayer> conv_out_;
};

}  // namespace flashps::vae
