// bfloat16 matrix products through oneDNN's matmul primitive, for linear layers with bfloat16
// weights and float32 activations: the input is rounded to bfloat16 once, the product
// accumulates in float32 and is written (bias added, or summed into the output) as float32 in
// one pass. LibTorch's bf16 path (at::matmul) writes a bfloat16 result that must then be widened
// and the bias added in further passes; at the few hundred rows of a masked edit that is ~25%
// slower (benchmarks/README.md). Primitives are created once per shape and thread and reused.
#pragma once
#include <ATen/Tensor.h>

namespace flashps {

// out [m, n] (float32, rows contiguous, any row stride) = bf16(x [m, k]) @ weight^T (+ bias), or
// out += that product when `accumulate`. weight: bfloat16 [n, k], rows contiguous (a column
// slice of a wider weight is fine); bias: float32-convertible [n] or undefined.
// Returns false, touching nothing, when oneDNN is unavailable or would not run it natively
// (no bf16 instructions: its reference kernels are far slower than LibTorch's path).
bool dnnl_bf16_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, at::Tensor& out,
                      bool accumulate);

// Process-wide switch (on by default) so benchmarks can time LibTorch's path beside this one.
void set_dnnl_bf16_linear_enabled(bool enabled);
bool dnnl_bf16_linear_enabled();

}  // namespace flashps
