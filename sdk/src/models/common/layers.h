// Leaf layers shared by all model families. Parameter names match diffusers/PyTorch
// ("weight", "bias") so module paths equal checkpoint keys.
#pragma once
#include <torch/nn/module.h>

#include <memory>

namespace flashps {

class QuantizedMatrix;

// nn.Linear, running through flashps::linear (oneDNN for fp32 on CPU).
// Its weight is either the dense `weight` parameter or, loaded with keep_quantized (weights.h), a
// quantized matrix kept as the file stores it (core/quant/quantized_matrix.h): `weight` is then
// undefined and not a parameter (so nothing reads wrong values from it, and parameters(), .to()
// and parameter counts see only dense tensors), and forward decodes the matrix chunk by chunk.
// Code that needs the weight asks weight_dtype() / weight_device() / dense_weight() /
// weight_columns(), which answer for both.
class LinearImpl : public torch::nn::Module {
 public:
  LinearImpl(int64_t in_features, int64_t out_features, bool with_bias = true);
  at::Tensor forward(const at::Tensor& x) const;
  int64_t in_features() const;
  int64_t out_features() const;

  // Replaces the dense weight by `matrix` ([out_features, in_features], checked); products run in
  // `compute_dtype` (float32 or bfloat16: the model's dtype).
  void keep_quantized(std::shared_ptr<const QuantizedMatrix> matrix, at::ScalarType compute_dtype);
  const std::shared_ptr<const QuantizedMatrix>& quantized_weight() const { return quantized_; }
  at::ScalarType weight_dtype() const;  // of the products: weight's dtype or the compute dtype
  at::Device weight_device() const;     // a quantized weight lives on the CPU
  at::Tensor dense_weight() const;      // `weight`, or the quantized matrix decoded (a new tensor)
  at::Tensor weight_columns(int64_t first, int64_t count) const;  // a view of `weight`, or decoded

  // A quantized weight stays quantized on the CPU (a float32/bfloat16 dtype becomes its compute
  // dtype); moving to another device, or another dtype, decodes it into `weight` first (the
  // block-wise product is CPU code; a GPU model holds dense weights in the model's dtype).
  void to(torch::Device device, torch::Dtype dtype, bool non_blocking = false) override;
  void to(torch::Dtype dtype, bool non_blocking = false) override;
  void to(torch::Device device, bool non_blocking = false) override;

  at::Tensor weight, bias;

 private:
  void decode_quantized_weight(at::ScalarType dtype);  // back to a dense `weight` parameter

  std::shared_ptr<const QuantizedMatrix> quantized_;
  at::ScalarType compute_dtype_ = at::kFloat;
};
TORCH_MODULE(Linear);

// What a module's weights occupy: dense parameters and buffers, and Linear weights kept quantized
// (as stored); `values` counts the weights' values either way (a quantized matrix: rows * cols).
struct WeightFootprint {
  int64_t dense_bytes = 0, quantized_bytes = 0, values = 0;
  int64_t quantized_matrices = 0, quantized_values = 0;
};
WeightFootprint weight_footprint(const torch::nn::Module& module);

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
// shapes, names and values are unchanged; quantized weights are left as stored. Call after
// loading and after any dtype conversion.
void prefer_fast_linear_layout(torch::nn::Module& module);

// Parameter-free LayerNorm over the last dimension (elementwise_affine=False).
at::Tensor layer_norm_no_affine(const at::Tensor& x, double eps);
at::Tensor gelu_tanh(const at::Tensor& x);

}  // namespace flashps
