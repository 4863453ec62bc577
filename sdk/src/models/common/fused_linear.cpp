#include "models/common/fused_linear.h"

#include <ATen/ATen.h>

#include "core/kernels/autograd_mode.h"
#include "core/kernels/linear.h"

namespace flashps {

std::vector<at::Tensor> FusedLinear::forward(const at::Tensor& x) const {
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
    if (!weight_.defined() || pointers != source_pointers_ ||
        weight_.scalar_type() != parts_[0]->weight.scalar_type()) {
      std::vector<at::Tensor> weights, biases;
      for (const Linear& part : parts_) {
        weights.push_back(part->weight);
        biases.push_back(part->bias.defined() ? part->bias : at::zeros({part->out_features()}, part->weight.options()));
      }
      weight_ = at::cat(weights, 0).contiguous();
      store_weights_transposed(weight_);
      bias_ = at::cat(biases, 0).contiguous();
      source_pointers_ = pointers;
    }
    weight = weight_;
    bias = bias_;
  }
  at::Tensor out = linear(x, weight, bias);
  std::vector<at::Tensor> outputs;
  int64_t offset = 0;
  for (const Linear& part : parts_) {
    outputs.push_back(out.narrow(-1, offset, part->out_features()));
    offset += part->out_features();
  }
  return outputs;
}

}  // namespace flashps
