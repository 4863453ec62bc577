#include "models/common/image_layers.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <vector>

#include "core/phase_profile.h"

namespace flashps {

Conv2dLayer::Conv2dLayer(int64_t in_channels, int64_t out_channels, int64_t kernel_size,
                         int64_t stride, int64_t padding)
    : stride_(stride), padding_(padding) {
  weight_ = register_parameter(
      "weight", at::empty({out_channels, in_channels, kernel_size, kernel_size}), false);
  bias_ = register_parameter("bias", at::empty({out_channels}), false);
}

at::Tensor Conv2dLayer::forward(const at::Tensor& input) const { return forward_padded(input, padding_); }

at::Tensor Conv2dLayer::forward_padded(const at::Tensor& input, int64_t padding) const {
  const int64_t kernel = weight_.size(2);
  const auto output_side = [&](int64_t side) { return (side + 2 * padding - kernel) / stride_ + 1; };
  const double flops = input.dim() == 4 ? 2.0 * double(input.size(0) * weight_.size(0) * weight_.size(1)) *
                                              double(kernel * kernel * output_side(input.size(2)) *
                                                     output_side(input.size(3)))
                                        : 0.0;
  PhaseTimer timer(Phase::convolution, flops);
  if (input.scalar_type() != weight_.scalar_type())  // mixed precision: products in the weights' dtype
    return at::conv2d(input.to(weight_.scalar_type()), weight_, bias_, {stride_, stride_}, {padding, padding})
        .to(input.scalar_type());
  return at::conv2d(input, weight_, bias_, {stride_, stride_}, {padding, padding});
}

GroupNormLayer::GroupNormLayer(int64_t num_groups, int64_t channels, double eps)
    : num_groups_(num_groups), eps_(eps) {
  weight_ = register_parameter("weight", at::empty({channels}), false);
  bias_ = register_parameter("bias", at::empty({channels}), false);
}

at::Tensor GroupNormLayer::forward(const at::Tensor& input) const {
  PhaseTimer timer(Phase::group_norm);
  const bool reduced_precision = input.scalar_type() == at::kBFloat16 || input.scalar_type() == at::kHalf;
  const bool channels_last = input.dim() == 4 && !input.is_contiguous() && input.is_contiguous(at::MemoryFormat::ChannelsLast);
  if (!reduced_precision && !channels_last)  // LibTorch's kernel for this layout is exact enough
    return at::group_norm(input, num_groups_, weight_.to(input.scalar_type()), bias_.to(input.scalar_type()), eps_);
  // LibTorch's CPU group_norm loses the statistics in two cases: in bf16/fp16 it accumulates in
  // that dtype (errors of order 1 on unit-variance input), and on channels-last input (LibTorch
  // 1.13) it computes E[x^2] - E[x]^2 in one pass, which cancels when a group's mean is large
  // next to its spread (a mean of 100 with spread 0.5 gave errors of 0.13, even in float32).
  // So: float32, minus a per-group estimate of the mean, which group norm does not see.
  const at::Tensor x = input.to(at::kFloat);
  at::Tensor shifted = x;
  if (input.dim() == 4) {
    const int64_t batch = x.size(0), channels = x.size(1), height = x.size(2), width = x.size(3);
    const int64_t stride = std::max<int64_t>(1, std::min(height, width) / 16);  // a 16 x 16 sample
    const at::Tensor sample = x.slice(2, 0, height, stride).slice(3, 0, width, stride);
    const at::Tensor group_means =
        sample.reshape({batch, num_groups_, channels / num_groups_, -1}).mean({2, 3}, /*keepdim=*/true);
    shifted = x - group_means.expand({batch, num_groups_, channels / num_groups_, 1}).reshape({batch, channels, 1, 1});
  }
  return at::group_norm(shifted, num_groups_, weight_.to(at::kFloat), bias_.to(at::kFloat), eps_)
      .to(input.scalar_type());
}

at::Tensor GroupNormLayer::forward_with_statistics(const at::Tensor& input, const at::Tensor& mean,
                                                   const at::Tensor& variance) const {
  PhaseTimer timer(Phase::group_norm);
  const int64_t batch = input.size(0), channels = input.size(1);
  std::vector<int64_t> grouped{batch, num_groups_, channels / num_groups_};
  for (int64_t d = 2; d < input.dim(); ++d) grouped.push_back(input.size(d));
  std::vector<int64_t> statistic_shape{batch, num_groups_, 1};
  for (int64_t d = 2; d < input.dim(); ++d) statistic_shape.push_back(1);
  const at::Tensor x = input.to(at::kFloat).reshape(grouped);
  const at::Tensor normalized = ((x - mean.to(at::kFloat).reshape(statistic_shape)) *
                                 at::rsqrt(variance.to(at::kFloat).reshape(statistic_shape) + eps_))
                                    .reshape(input.sizes());
  std::vector<int64_t> affine_shape{1, channels};
  for (int64_t d = 2; d < input.dim(); ++d) affine_shape.push_back(1);
  return (normalized * weight_.to(at::kFloat).reshape(affine_shape) + bias_.to(at::kFloat).reshape(affine_shape))
      .to(input.scalar_type());
}

}  // namespace flashps
