// Leaf layers shared by all model families. Parameter names match diffusers/PyTorch
// ("weight", "bias") so module paths equal checkpoint keys.
#pragma once
#include <torch/nn/module.h>

namespace flashps {

// nn.Linear, running through flashps::linear (oneDNN for fp32 on CPU).
class LinearImpl : public torch::nn::Module {
 public:
  LinearImpl(int64_t in_features, int64_t out_features, bool with_bias = true);
  at::Tensor forward(const at::Tensor& x) const;
  int64_t in_features() const { return weight.size(1); }
  int64_t out_features() const { return weight.size(0); }
  at::Tensor weight, bias;
};
TORCH_MODULE(Linear);

// RMSNorm over the last dimension with a learned scale (diffusers RMSNorm, eps 1e-6):
// the variance is computed in float32 as diffusers does, whatever the input dtype.
class RMSNormImpl : public torch::nn::Module {
 public:
  RMSNormImpl(int64_t dim, double eps);
  at::Tensor forward(const at::Tensor& x) const;
  at::Tensor weight;
  double eps;
};
TORCH_MODULE(RMSNorm);

// A module whose registered children and parameters become segments of checkpoint keys
// ("text_model.encoder", "layer.0.SelfAttention"): a checkpoint's structure with no code of its own.
class PathNode : public torch::nn::Module {
 public:
  using torch::nn::Module::register_module;
  using torch::nn::Module::register_parameter;
};

// A module with no parameters, to fill a numbered slot of a ModuleList (dropout in diffusers).
class EmptySlotImpl : public torch::nn::Module {};
TORCH_MODULE(EmptySlot);

// Re-stores every Linear weight of a module tree in the layout flashps::linear multiplies
// fastest for its dtype (float32: column-major, see store_weights_transposed; others: row-major);
// shapes, names and values are unchanged. Call after loading and after any dtype conversion.
void prefer_fast_linear_layout(torch::nn::Module& module);

// Parameter-free LayerNorm over the last dimension (elementwise_affine=False).
at::Tensor layer_norm_no_affine(const at::Tensor& x, double eps);
at::Tensor gelu_tanh(const at::Tensor& x);

}  // namespace flashps
