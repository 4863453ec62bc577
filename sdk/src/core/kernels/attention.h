// Scaled dot-product attention on token-major tensors, the layout the models keep their
// activations in: q [Sq, heads*head_dim], keys and values [Sk, heads*head_dim] -> [Sq, width].
// Token-major avoids the transposes a [heads, S, head_dim] layout would need per block, and
// keys/values may come in parts (text, carried image tokens, cached image tokens) that are used
// in place rather than concatenated.
#pragma once
#include <ATen/Tensor.h>

#include <vector>

namespace flashps {

// skipped_rows: per key part, rows of that part no query attends to (int64; undefined: none);
// empty: none in any part. Lets a part be a cached tensor used in place although some of its
// rows are stale (the request computes those tokens afresh in another part).
// bf16_products: a bf16 model's attention: queries, keys, values and probabilities rounded to
// bfloat16 for the products (oneDNN matmul, core/kernels/dnnl_matmul.h), scores, softmax and the output
// accumulated in float32, as LibTorch's bf16 attention does; float32 products otherwise (and
// where the CPU has no native bf16 kernel).
at::Tensor token_major_attention(const at::Tensor& q, const std::vector<at::Tensor>& key_parts,
                                 const std::vector<at::Tensor>& value_parts, int64_t heads,
                                 const std::vector<at::Tensor>& skipped_rows = {}, bool bf16_products = false);

inline at::Tensor token_major_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                        int64_t heads) {
  return token_major_attention(q, std::vector<at::Tensor>{k}, std::vector<at::Tensor>{v}, heads);
}

}  // namespace flashps
