#include <ATen/ATen.h>

#include "core/kernels/autograd_mode.h"
#include "core/kernels/fast_kernels.h"
#include "models/flux/flux_blocks.h"

namespace flashps {

// A module holding one child at a fixed name, used to build "net.0.proj" paths.
class NamedChildImpl : public torch::nn::Module {
 public:
  NamedChildImpl(const std::string& name, Linear child) { register_module(name, child); }
};
TORCH_MODULE(NamedChild);

FeedForwardImpl::FeedForwardImpl(int64_t dim, int64_t hidden_dim) {
  projection_in = Linear(dim, hidden_dim);
  projection_out = Linear(hidden_dim, dim);
  torch::nn::ModuleList net;
  net->push_back(NamedChild("proj", projection_in));
  net->push_back(EmptySlot());  // dropout
  net->push_back(projection_out);
  register_module("net", net);
}

at::Tensor FeedForwardImpl::forward(const at::Tensor& x) const {
  return projection_out->forward(gelu_tanh(projection_in->forward(x)));
}

FluxAttentionImpl::FluxAttentionImpl(int64_t dim, int64_t heads, int64_t head_dim, bool joint,
                                     bool with_output)
    : heads(heads) {
  const int64_t width = heads * head_dim;
  to_q = register_module("to_q", Linear(dim, width));
  to_k = register_module("to_k", Linear(dim, width));
  to_v = register_module("to_v", Linear(dim, width));
  norm_q = register_module("norm_q", RMSNorm(head_dim, 1e-6));
  norm_k = register_module("norm_k", RMSNorm(head_dim, 1e-6));
  if (joint) {
    add_q_proj = register_module("add_q_proj", Linear(dim, width));
    add_k_proj = register_module("add_k_proj", Linear(dim, width));
    add_v_proj = register_module("add_v_proj", Linear(dim, width));
    norm_added_q = register_module("norm_added_q", RMSNorm(head_dim, 1e-6));
    norm_added_k = register_module("norm_added_k", RMSNorm(head_dim, 1e-6));
    to_add_out = register_module("to_add_out", Linear(width, dim));
  }
  image_qkv = FusedLinear({to_q, to_k, to_v});
  image_kv = FusedLinear({to_k, to_v});
  if (joint) text_qkv = FusedLinear({add_q_proj, add_k_proj, add_v_proj});
  if (with_output) {
    output_projection = Linear(width, dim);
    to_out = torch::nn::ModuleList();
    to_out->push_back(output_projection);
    register_module("to_out", to_out);
  }
}

at::Tensor per_head_rms_norm(const RMSNorm& norm, const at::Tensor& x, int64_t heads) {
  if (x.device().is_cpu() && x.scalar_type() == at::kFloat && !needs_autograd(x, norm->weight))
    return fast_head_rms_norm(x, norm->weight, heads, norm->eps);
  const int64_t rows = x.size(0);
  return norm->forward(x.view({rows, heads, x.size(1) / heads})).view({rows, x.size(1)});
}

}  // namespace flashps
