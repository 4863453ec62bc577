#include "models/common/fused_linear.h"

#include <ATen/ATen.h>

#include "core/kernels/autograd_mode.h"
#include "core/kernels/linear.h"
#include "core/quant/quantized_matrix.h"

namespace flashps {

std::vector<at::Tensor> FusedLinear::split_outputs(const at::Tensor& out) const {
  std::vector<at::Tensor> outputs;
  int64_t offset = 0;
  for (const Linear& part : parts_) {
    outputs.push_back(out.narrow(-1, offset, part->out_features()));
    offset += part->out_features();
  }
  return outputs;
}

std::vector<at::Tensor> FusedLinear::forward_quantized(const at::Tensor& x) const {
  std::shared_ptr<const QuantizedMatrix> matrix;
  at::Tensor bias;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // Identity of the sources: the quantized matrices, and storage and version of every bias.
    std::vector<int64_t> pointers;
    for (const Linear& part : parts_) {
      pointers.push_back(reinterpret_cast<int64_t>(part->quantized_weight().get()));
      pointers.push_back(int64_t(part->weight_dtype()));
      if (part->bias.defined()) {
        pointers.push_back(reinterpret_cast<int64_t>(part->bias.data_ptr()));
        pointers.push_back(part->bias._version());
      }
    }
    if (pointers != source_pointers_) {
      std::vector<const QuantizedMatrix*> matrices;
      bool fusable = true;
      for (const Linear& part : parts_) {
        fusable = fusable && part->quantized_weight() && part->weight_dtype() == parts_[0]->weight_dtype();
        if (part->quantized_weight()) matrices.push_back(part->quantized_weight().get());
      }
      std::optional<QuantizedMatrix> joined;
      if (fusable) joined = QuantizedMatrix::concatenate(matrices);
      quantized_ = joined ? std::make_shared<const QuantizedMatrix>(std::move(*joined)) : nullptr;
      std::vector<at::Tensor> biases;
      for (const Linear& part : parts_)
        biases.push_back(part->bias.defined() ? part->bias
                                              : at::zeros({part->out_features()}, part->weight_dtype()));
      bias_ = at::cat(biases, 0);
      weight_ = at::Tensor();
      source_pointers_ = pointers;
    }
    matrix = quantized_;
    bias = bias_;
  }
  if (!matrix) {  // encodings or dtypes differ: one product per part, no decoded copy kept
    std::vector<at::Tensor> outputs;
    for (const Linear& part : parts_) outputs.push_back(part->forward(x));
    return outputs;
  }
  return split_outputs(matrix->linear(x, bias, parts_[0]->weight_dtype()));
}

std::vector<at::Tensor> FusedLinear::forward(const at::Tensor& x) const {
  for (const Linear& part : parts_)
    if (part->quantized_weight()) return forward_quantized(x);
  if (needs_autograd(parts_[0]->weight)) {  // training: no cached concatenation in the graph
    std::vector<at::Tensor> outputs;
    for (const Linear& part : parts_) outputs.push_back(part->forward(x));
    return outputs;
  }
  at::Tensor weight, bias;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // Identity of the sources: storage and in-place version of every weight and bias.
    std::vector<int64_t> pointers;
    for (const Linear& part : parts_) {
      pointers.push_back(reinterpret_cast<int64_t>(part->weight.data_ptr()));
      pointers.push_back(part->weight._version());
      if (part->bias.defined()) {
        pointers.push_back(reinterpret_cast<int64_t>(part->bias.data_ptr()));
        pointers.push_back(part->bias._version());
      }
    }
    if (!weight_.defined() || quantized_ || pointers != source_pointers_ ||
        weight_.scalar_type() != parts_[0]->weight.scalar_type()) {
      std::vector<at::Tensor> weights, biases;
      for (const Linear& part : parts_) {
        weights.push_back(part->weight);
        biases.push_back(part->bias.defined() ? part->bias : at::zeros({part->out_features()}, part->weight.options()));
      }
      weight_ = at::cat(weights, 0).contiguous();
      store_weights_transposed(weight_);
      bias_ = at::cat(biases, 0).contiguous();
      quantized_.reset();
      source_pointers_ = pointers;
    }
    weight = weight_;
    bias = bias_;
  }
  return split_outputs(linear(x, weight, bias));
}

}  // namespace flashps
