#include "models/vae/vae_encoder.h"

#include <ATen/ATen.h>

namespace flashps::vae {

DownEncoderBlock2D::DownEncoderBlock2D(int64_t in_channels, int64_t out_channels,
                                       int64_t num_layers, int64_t num_groups,
                                       bool add_downsample) {
  for (int64_t layer = 0; layer < num_layers; ++layer)
    resnets_.push_back(std::make_shared<ResnetBlock2D>(layer == 0 ? in_channels : out_channels,
                                                       out_channels, num_groups, kVaeNormEps));
  register_module_list(*this, "resnets", resnets_);
  if (add_downsample) {
    downsampler_ = std::make_shared<Downsample2D>(out_channels);
    register_module_list(*this, "downsamplers", std::vector{downsampler_});
  }
}

at::Tensor DownEncoderBlock2D::forward(const at::Tensor& input) const {
  at::Tensor hidden = input;
  for (const auto& resnet : resnets_) hidden = resnet->forward(hidden);
  return downsampler_ ? downsampler_->forward(hidden) : hidden;
}

VaeEncoder::VaeEncoder(const AutoencoderKLConfig& config) {
  const auto& channels = config.block_out_channels;
  conv_in_ = register_module(
      "conv_in", std::make_shared<Conv2dLayer>(config.in_channels, channels.front(), 3, 1, 1));
  int64_t block_in = channels.front();
  for (size_t i = 0; i < channels.size(); ++i) {
    const bool is_last = i + 1 == channels.size();
    down_blocks_.push_back(std::make_shared<DownEncoderBlock2D>(
        block_in, channels[i], config.layers_per_block, config.norm_num_groups, !is_last));
    block_in = channels[i];
  }
  register_module_list(*this, "down_blocks", down_blocks_);
  mid_block_ = register_module(
      "mid_block", std::make_shared<VaeMidBlock>(channels.back(), config.norm_num_groups,
                                                 config.mid_block_add_attention));
  conv_norm_out_ = register_module(
      "conv_norm_out",
      std::make_shared<GroupNormLayer>(config.norm_num_groups, channels.back(), kVaeNormEps));
  // double_z: mean and log-variance.
  conv_out_ = register_module(
      "conv_out",
      std::make_shared<Conv2dLayer>(channels.back(), 2 * config.latent_channels, 3, 1, 1));
}

at::Tensor VaeEncoder::forward(const at::Tensor& image) const {
  at::Tensor hidden = conv_in_->forward(image);
  for (const auto& block : down_blocks_) hidden = block->forward(hidden);
  hidden = mid_block_->forward(hidden);
  return conv_out_->forward(conv_norm_out_->forward_silu(hidden));
}

}  // namespace flashps::vae
