#include "models/common/layers.h"

#include <ATen/ATen.h>

#include "core/kernels/fast_kernels.h"
#include "core/kernels/linear.h"

namespace flashps {

LinearImpl::LinearImpl(int64_t in_features, int64_t out_features, bool with_bias) {
  weight = register_parameter("weight", at::empty({out_features, in_features}), false);
  if (with_bias) bias = register_parameter("bias", at::empty({out_features}), false);
}

at::Tensor LinearImpl::forward(const at::Tensor& x) const { return linear(x, weight, bias); }

RMSNormImpl::RMSNormImpl(int64_t dim, double eps) : eps(eps) {
  weight = register_parameter("weight", at::ones({dim}), false);
}

at::Tensor RMSNormImpl::forward(const at::Tensor& x) const {
  at::Tensor x32 = x.to(at::kFloat);
  at::Tensor normalized = x32 * at::rsqrt(x32.pow(2).mean(-1, /*keepdim=*/true) + eps);
  // float32 activations stay float32 with bfloat16 weights (mixed precision, see linear.h).
  if (x.scalar_type() == at::kFloat) return normalized * weight.to(at::kFloat);
  return normalized.to(weight.scalar_type()) * weight;
}

void prefer_fast_linear_layout(torch::nn::Module& module) {
  for (const auto& child : module.modules(/*include_self=*/true))
    if (auto* linear_layer = dynamic_cast<LinearImpl*>(child.get())) {
      at::Tensor& weight = linear_layer->weight;
      if (weight.scalar_type() == at::kFloat) {
        store_weights_transposed(weight);
      } else if (!weight.is_contiguous()) {
        at::NoGradGuard no_grad;
        weight.set_data(weight.contiguous());  // other dtypes multiply fastest row-major
      }
    }
}

at::Tensor layer_norm_no_affine(const at::Tensor& x, double eps) {
  return at::layer_norm(x, {x.size(-1)}, {}, {}, eps);
}

at::Tensor gelu_tanh(const at::Tensor& x) { return fast_gelu_tanh(x); }

}  // namespace flashps
