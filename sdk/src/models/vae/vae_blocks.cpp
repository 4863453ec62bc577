#include "models/vae/vae_blocks.h"

#include <ATen/ATen.h>

namespace flashps::vae {

ResnetBlock2D::ResnetBlock2D(int64_t in_channels, int64_t out_channels, int64_t num_groups,
                             double eps) {
  norm1_ = register_module("norm1", std::make_shared<GroupNormLayer>(num_groups, in_channels, eps));
  conv1_ =
      register_module("conv1", std::make_shared<Conv2dLayer>(in_channels, out_channels, 3, 1, 1));
  norm2_ =
      register_module("norm2", std::make_shared<GroupNormLayer>(num_groups, out_channels, eps));
  conv2_ =
      register_module("conv2", std::make_shared<Conv2dLayer>(out_channels, out_channels, 3, 1, 1));
  if (in_channels != out_channels)
    conv_shortcut_ = register_module(
        "conv_shortcut", std::make_shared<Conv2dLayer>(in_channels, out_channels, 1, 1, 0));
}

at::Tensor ResnetBlock2D::forward(const at::Tensor& input) const {
  // conv2's output is a fresh tensor, so the residual add runs in place.
  at::Tensor hidden = conv1_->forward(norm1_->forward_silu(input));
  hidden = conv2_->forward(norm2_->forward_silu(hidden));
  hidden.add_(conv_shortcut_ ? conv_shortcut_->forward(input) : input);
  return hidden;
}

Downsample2D::Downsample2D(int64_t channels) {
  conv_ = register_module("conv", std::make_shared<Conv2dLayer>(channels, channels, 3, 2, 0));
}

at::Tensor Downsample2D::forward(const at::Tensor& input) const {
  // Asymmetric padding (right and bottom only) matches the original LDM weights.
  return conv_->forward(at::constant_pad_nd(input, {0, 1, 0, 1}, 0));
}

Upsample2D::Upsample2D(int64_t channels) {
  conv_ = register_module("conv", std::make_shared<Conv2dLayer>(channels, channels, 3, 1, 1));
}

at::Tensor Upsample2D::forward(const at::Tensor& input) const {
  // Nearest x2 as a broadcast copy: exact, one pass, any dtype (LibTorch 1.13 lacks some
  // reduced-precision upsample kernels) and in the input's memory format.
  const int64_t batch = input.size(0), channels = input.size(1);
  const int64_t height = input.size(2), width = input.size(3);
  at::Tensor upsampled;
  if (input.is_contiguous(at::MemoryFormat::ChannelsLast)) {
    upsampled = input
                    .permute({0, 2, 3, 1})  // [B, H, W, C], contiguous
                    .reshape({batch, height, 1, width, 1, channels})
                    .expand({batch, height, 2, width, 2, channels})
                    .reshape({batch, 2 * height, 2 * width, channels})
                    .permute({0, 3, 1, 2});
  } else {
    upsampled = input.reshape({batch, channels, height, 1, width, 1})
                    .expand({batch, channels, height, 2, width, 2})
                    .reshape({batch, channels, 2 * height, 2 * width});
  }
  return conv_->forward(upsampled);
}

VaeMidBlock::VaeMidBlock(int64_t channels, int64_t num_groups, bool add_attention) {
  for (int i = 0; i < 2; ++i)
    resnets_.push_back(
        std::make_shared<ResnetBlock2D>(channels, channels, num_groups, kVaeNormEps));
  register_module_list(*this, "resnets", resnets_);
  if (add_attention) {
    attention_ = std::make_shared<SpatialSelfAttention>(channels, num_groups, kVaeNormEps);
    register_module_list(*this, "attentions", std::vector{attention_});
  }
}

at::Tensor VaeMidBlock::forward(const at::Tensor& input) const {
  at::Tensor hidden = resnets_[0]->forward(input);
  if (attention_) hidden = attention_->forward(hidden);
  return resnets_[1]->forward(hidden);
}

}  // namespace flashps::vae
