// Hand-vectorised element-wise kernels for the hot paths of the transformer blocks. Debian's
// LibTorch 1.13 runs softmax and tanh-GELU at several ns per element on these CPUs; these
// loops (compiled with -O3 -ffast-math and SIMD clones of expf/tanhf) run several times faster.
// CPU tensors only; callers fall back to ATen elsewhere.
#pragma once
#include <ATen/Tensor.h>

// For kernels compiled with fast_kernels.cpp's flags (sdk/CMakeLists.txt): one AVX-512, one
// AVX2 and one baseline version of the function, chosen at load time.
#define FLASHPS_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

namespace flashps {

// Row-wise softmax in place over a contiguous float32 matrix [rows, cols].
void softmax_rows_inplace(float* data, int64_t rows, int64_t cols);

// GELU with the tanh approximation; float32 or bfloat16 CPU tensors (same dtype out).
at::Tensor fast_gelu_tanh(const at::Tensor& x);

// Interleaved-pair rotary embedding on x [rows, heads*head_dim] with float32 cos/sin tables
// [rows, head_dim / 2] (one angle per pair); float32 or bfloat16 (same dtype out).
at::Tensor fast_rotary(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin, int64_t heads);

// Per-head RMS norm with a learned scale (diffusers RMSNorm, statistics in float32) on
// x [rows, heads*head_dim] (any row stride), weight [head_dim]; float32 out.
at::Tensor fast_head_rms_norm(const at::Tensor& x, const at::Tensor& weight, int64_t heads, double eps);

bool fast_kernels_apply(const at::Tensor& x);  // CPU, contiguous-able float32/bfloat16

// bfloat16 bits <-> float32 rows (round to nearest even, as ATen does), vectorised.
void bf16_row_to_float(const uint16_t* in, float* out, int64_t count);
void float_row_to_bf16(const float* in, uint16_t* out, int64_t count);

}  // namespace flashps
