#include "models/common/image_layers.h"

#include <ATen/ATen.h>

#include <vector>

#include "core/kernels/group_norm_kernel.h"
#include "core/diagnostics/phase_profile.h"

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

at::Tensor GroupNormLayer::forward(const at::Tensor& input) const { return normalize(input, false); }

at::Tensor GroupNormLayer::forward_silu(const at::Tensor& input) const { return normalize(input, true); }

at::Tensor GroupNormLayer::normalize(const at::Tensor& input, bool silu) const {
  PhaseTimer timer(Phase::group_norm);
  // LibTorch's CPU kernel loses the statistics of bf16 and channels-last input
  // (core/kernels/group_norm_kernel.h); ours also fuses the SiLU that follows most norms.
  if (group_norm_kernel_applies(input)) return group_norm_cpu(input, num_groups_, weight_, bias_, eps_, silu);
  // Elsewhere (GPUs, autograd): statistics in at least float32.
  const at::ScalarType dtype = input.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  at::Tensor output = at::group_norm(input.to(dtype), num_groups_, weight_.to(dtype), bias_.to(dtype), eps_);
  if (silu) output = at::silu(output);
  return output.to(input.scalar_type());
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
