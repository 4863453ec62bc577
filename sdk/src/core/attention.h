// Scaled dot-product attention on token-major tensors, the layout the models keep their
// activations in: q [Sq, heads*head_dim], k and v [Sk, heads*head_dim] -> [Sq, heads*head_dim].
// Token-major avoids the transposes a [heads, S, head_dim] layout would need per block.
#pragma once
#include <ATen/Tensor.h>

namespace flashps {

at::Tensor token_major_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                 int64_t heads);

}  // namespace flashps
