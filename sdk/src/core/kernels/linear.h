// Dense matrix products used by every model: y = x W^T + b and batched attention products.
// On CPU fp32 these call oneDNN's sgemm directly (about 6x faster than LibTorch's OpenBLAS
// path on these machines); everything else (bf16, CUDA) goes through LibTorch.
#pragma once
#include <ATen/Tensor.h>

namespace flashps {

// x: [..., in], weight: [out, in], bias: [out] or undefined. Returns [..., out].
// Mixed precision: with bfloat16 weights and a float32 x, the product runs in bfloat16 (the
// fast path on these CPUs) and the result, bias added, is float32, so activations stay float32
// between layers (LibTorch 1.13's bfloat16 element-wise kernels are slow on CPU).
at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

// Re-stores a float32 weight [out, in] column-major (same shape and values, transposed memory),
// the layout linear() multiplies fastest; no extra memory. Called once after loading.
void store_weights_transposed(at::Tensor& weight);

// out [m, n] += x [m, k] @ weight_columns^T, where weight_columns [n, k] may be a column slice
// of a larger weight (it is read in place). Splitting a layer over concatenated inputs this way
// avoids building the concatenation.
void linear_accumulate(at::Tensor& out, const at::Tensor& x, const at::Tensor& weight_columns);

// a: [batch, m, k], b: [batch, n, k] -> a @ b^T: [batch, m, n] (attention scores).
at::Tensor batched_matmul_transposed(const at::Tensor& a, const at::Tensor& b);
// a: [batch, m, k], b: [batch, k, n] -> a @ b: [batch, m, n] (attention-weighted values).
at::Tensor batched_matmul(const at::Tensor& a, const at::Tensor& b);

}  // namespace flashps
