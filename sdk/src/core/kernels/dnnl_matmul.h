// bfloat16 matrix products through oneDNN's matmul primitive, float32 results. Used for linear
// layers with bfloat16 weights and float32 activations (the input is rounded to bfloat16 once,
// the product accumulates in float32 and is written, bias added or summed into the output, in
// one pass; LibTorch's bf16 path writes a bfloat16 result that must then be widened and the bias
// added in further passes) and for attention of bf16 models. Primitives are created once per
// shape, strides and thread and reused.
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

// c [m, n] (float32, row stride ldc) = a [m, k] @ b [k, n] (+ c when `accumulate`), a and b
// bfloat16 in place: a's element (i, l) at a[i * lda + l], b's (l, j) at b[l * b_row + j * b_col],
// so a transposed or column-sliced operand (one attention head's keys) needs no copy. Returns
// false, touching nothing, where oneDNN has no native bf16 kernel.
bool dnnl_bf16_gemm(int64_t m, int64_t k, int64_t n, const void* a, int64_t lda, const void* b, int64_t b_row,
                    int64_t b_col, float* c, int64_t ldc, bool accumulate);

// Process-wide switch (on by default) so benchmarks can time the paths without these products
// (LibTorch's bf16 linear, float32 attention) beside them.
void set_dnnl_bf16_linear_enabled(bool enabled);

}  // namespace flashps
