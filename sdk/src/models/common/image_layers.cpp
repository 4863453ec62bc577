#include "models/common/image_layers.h"

#include <ATen/ATen.h>

namespace flashps {

Conv2dLayer::Conv2dLayer(int64_t in_channels, int64_t out_channels, int64_t kernel_size,
                         int64_t stride, int64_t padding)
    : stride_(stride), padding_(padding) {
  weight_ = register_parameter(
      "weight", at::empty({out_channels, in_channels, kernel_size, kernel_size}), false);
  bias_ = register_parameter("bias", at::empty({out_channels}), false);
}

at::Tensor Conv2dLayer::forward(const at::Tensor& input) const {
  if (input.scalar_type() != weight_.scalar_type())  // mixed precision: products in the weights' dtype
    return at::conv2d(input.to(weight_.scalar_type()), weight_, bias_, {stride_, stride_}, {padding_, padding_})
        .to(input.scalar_type());
  return at::conv2d(input, weight_, bias_, {stride_, stride_}, {padding_, padding_});
}

GroupNormLayer::GroupNormLayer(int64_t num_groups, int64_t channels, double eps)
    : num_groups_(num_groups), eps_(eps) {
  weight_ = register_parameter("weight", at::empty({channels}), false);
  bias_ = register_parameter("bias", at::empty({channels}), false);
}

at::Tensor GroupNormLayer::forward(const at::Tensor& input) const {
  if (input.scalar_type() != weight_.scalar_type())  // mixed precision: statistics in the activations' dtype
    return at::group_norm(input, num_groups_, weight_.to(input.scalar_type()), bias_.to(input.scalar_type()), eps_);
  return at::group_norm(input, num_groups_, weight_, bias_, eps_);
}

}  // namespace flashps
