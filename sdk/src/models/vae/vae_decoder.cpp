#include <ATen/ATen.h>

#include "models/vae/vae_encoder.h"

namespace flashps::vae {

UpDecoderBlock2D::UpDecoderBlock2D(int64_t in_channels, int64_t out_channels, int64_t num_layers,
                                   int64_t num_groups, bool add_upsample) {
  for (int64_t layer = 0; layer < num_layers; ++layer)
    resnets_.push_back(std::make_shared<ResnetBlock2D>(layer == 0 ? in_channels : out_channels,
                                                       out_channels, num_groups, kVaeNormEps));
  register_module_list(*this, "resnets", resnets_);
  if (add_upsample) {
    upsampler_ = std::make_shared<Upsample2D>(out_channels);
    register_module_list(*this, "upsamplers", std::vector{upsampler_});
  }
}

at::Tensor UpDecoderBlock2D::forward(const at::Tensor& input) const {
  at::Tensor hidden = input;
  for (const auto& resnet : resnets_) hidden = resnet->forward(hidden);
  return upsampler_ ? upsampler_->forward(hidden) : hidden;
}

VaeDecoder::VaeDecoder(const AutoencoderKLConfig& config) {
  const auto& channels = config.block_out_channels;
  conv_in_ = register_module(
      "conv_in", std::make_shared<Conv2dLayer>(config.latent_channels, channels.back(), 3, 1, 1));
  // Registration order follows diffusers (mid_block before up_blocks); only names matter for
  // loading.
  mid_block_ = register_module(
      "mid_block", std::make_shared<VaeMidBlock>(channels.back(), config.norm_num_groups,
                                                 config.mid_block_add_attention));
  // Up blocks walk block_out_channels backwards, each with one resnet more than a down block.
  int64_t block_in = channels.back();
  for (size_t i = 0; i < channels.size(); ++i) {
    const int64_t block_out = channels[channels.size() - 1 - i];
    const bool is_last = i + 1 == channels.size();
    up_blocks_.push_back(std::make_shared<UpDecoderBlock2D>(
        block_in, block_out, config.layers_per_block + 1, config.norm_num_groups, !is_last));
    block_in = block_out;
  }
  register_module_list(*this, "up_blocks", up_blocks_);
  conv_norm_out_ = register_module(
      "conv_norm_out",
      std::make_shared<GroupNormLayer>(config.norm_num_groups, channels.front(), kVaeNormEps));
  conv_out_ = register_module(
      "conv_out", std::make_shared<Conv2dLayer>(channels.front(), config.out_channels, 3, 1, 1));
}

at::Tensor VaeDecoder::forward(const at::Tensor& latent) const {
  at::Tensor hidden = conv_in_->forward(latent);
  hidden = mid_block_->forward(hidden);
  for (const auto& block : up_blocks_) hidden = block->forward(hidden);
  return conv_out_->forward(conv_norm_out_->forward_silu(hidden));
}

}  // namespace flashps::vae
