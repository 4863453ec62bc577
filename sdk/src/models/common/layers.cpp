#include "models/common/layers.h"

#include <ATen/ATen.h>

#include "core/kernels/fast_kernels.h"
#include "core/diagnostics/error.h"
#include "core/kernels/linear.h"
#include "core/quant/quantized_matrix.h"

namespace flashps {

LinearImpl::LinearImpl(int64_t in_features, int64_t out_features, bool with_bias) {
  weight = register_parameter("weight", at::empty({out_features, in_features}), false);
  if (with_bias) bias = register_parameter("bias", at::empty({out_features}), false);
}

at::Tensor LinearImpl::forward(const at::Tensor& x) const {
  if (quantized_) return quantized_->linear(x, bias, compute_dtype_);
  return linear(x, weight, bias);
}

int64_t LinearImpl::in_features() const { return quantized_ ? quantized_->cols() : weight.size(1); }
int64_t LinearImpl::out_features() const { return quantized_ ? quantized_->rows() : weight.size(0); }

void LinearImpl::keep_quantized(std::shared_ptr<const QuantizedMatrix> matrix, at::ScalarType compute_dtype) {
  if (!matrix || matrix->rows() != out_features() || matrix->cols() != in_features())
    throw InvalidArgumentError(std::string("Linear: a quantized weight of ") +
                               (matrix ? std::to_string(matrix->rows()) + "x" + std::to_string(matrix->cols())
                                       : std::string("nothing")) +
                               " for a layer of " + std::to_string(out_features()) + "x" +
                               std::to_string(in_features()));
  if (compute_dtype != at::kFloat && compute_dtype != at::kBFloat16)
    throw InvalidArgumentError(matrix->name() + ": quantized weights multiply in float32 or bfloat16, not " +
                               std::string(c10::toString(compute_dtype)));
  quantized_ = std::move(matrix);
  compute_dtype_ = compute_dtype;
  weight = at::Tensor();
  parameters_["weight"] = at::Tensor();  // an undefined parameter is skipped by parameters() and to()
}

at::ScalarType LinearImpl::weight_dtype() const { return quantized_ ? compute_dtype_ : weight.scalar_type(); }

at::Device LinearImpl::weight_device() const { return quantized_ ? at::Device(at::kCPU) : weight.device(); }

at::Tensor LinearImpl::dense_weight() const { return quantized_ ? quantized_->dequantize(compute_dtype_) : weight; }

at::Tensor LinearImpl::weight_columns(int64_t first, int64_t count) const {
  return dense_weight().narrow(1, first, count);
}

void LinearImpl::decode_quantized_weight(at::ScalarType dtype) {
  at::Tensor decoded = quantized_->dequantize(at::kFloat).to(dtype);  // exact in float32, rounded once
  quantized_.reset();
  weight = decoded;
  parameters_["weight"] = weight;
}

void LinearImpl::to(torch::Device device, torch::Dtype dtype, bool non_blocking) {
  if (quantized_ && (!device.is_cpu() || (dtype != at::kFloat && dtype != at::kBFloat16))) decode_quantized_weight(dtype);
  if (quantized_) compute_dtype_ = dtype;
  torch::nn::Module::to(device, dtype, non_blocking);
}

void LinearImpl::to(torch::Dtype dtype, bool non_blocking) {
  if (quantized_ && dtype != at::kFloat && dtype != at::kBFloat16) decode_quantized_weight(dtype);
  if (quantized_) compute_dtype_ = dtype;
  torch::nn::Module::to(dtype, non_blocking);
}

void LinearImpl::to(torch::Device device, bool non_blocking) {
  if (quantized_ && !device.is_cpu()) decode_quantized_weight(compute_dtype_);
  torch::nn::Module::to(device, non_blocking);
}

WeightFootprint weight_footprint(const torch::nn::Module& module) {
  WeightFootprint footprint;
  for (const at::Tensor& tensor : module.parameters(/*recurse=*/true)) {
    footprint.dense_bytes += int64_t(tensor.numel() * tensor.element_size());
    footprint.values += tensor.numel();
  }
  for (const at::Tensor& tensor : module.buffers(/*recurse=*/true)) {
    footprint.dense_bytes += int64_t(tensor.numel() * tensor.element_size());
    footprint.values += tensor.numel();
  }
  module.apply([&](const torch::nn::Module& child) {
    if (const auto* linear_layer = dynamic_cast<const LinearImpl*>(&child))
      if (const auto& matrix = linear_layer->quantized_weight()) {
        footprint.quantized_bytes += matrix->stored_bytes();
        footprint.values += matrix->rows() * matrix->cols();
        footprint.quantized_values += matrix->rows() * matrix->cols();
        ++footprint.quantized_matrices;
      }
  });
  return footprint;
}

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
    if (auto* linear_layer = dynamic_cast<LinearImpl*>(child.get()); linear_layer && !linear_layer->quantized_weight()) {
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
