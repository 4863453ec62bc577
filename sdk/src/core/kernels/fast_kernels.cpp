#include "core/kernels/fast_kernels.h"

#include "core/kernels/autograd_mode.h"
#include "core/diagnostics/error.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <cmath>
#include <cstring>

namespace flashps {
namespace {

inline float bf16_to_float(uint16_t value) {
  uint32_t bits = static_cast<uint32_t>(value) << 16;
  float result;
  std::memcpy(&result, &bits, sizeof(result));
  return result;
}

inline uint16_t float_to_bf16(float value) {  // round to nearest even, as ATen does
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;  // NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

FLASHPS_VECTOR_CLONES void gelu_row(const float* in, float* out, int64_t count) {
  constexpr float kAlpha = 0.7978845608028654f;  // sqrt(2/pi)
#pragma omp simd
  for (int64_t i = 0; i < count; ++i) {
    const float x = in[i];
    out[i] = 0.5f * x * (1.0f + std::tanh(kAlpha * (x + 0.044715f * x * x * x)));
  }
}


// Applies `kernel(in, out, count)` over chunks of a float32 or bf16 tensor, in parallel.
template <typename Kernel>
at::Tensor map_elements(const at::Tensor& input, Kernel kernel) {
  at::Tensor x = input.contiguous();
  at::Tensor out = at::empty_like(x);
  const int64_t count = x.numel();
  constexpr int64_t kChunk = 4096;
  if (x.scalar_type() == at::kFloat) {
    const float* in = x.data_ptr<float>();
    float* result = out.data_ptr<float>();
    at::parallel_for(0, (count + kChunk - 1) / kChunk, 1, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        const int64_t offset = c * kChunk;
        kernel(in + offset, result + offset, std::min(kChunk, count - offset));
      }
    });
  } else {
    const uint16_t* in = reinterpret_cast<const uint16_t*>(x.data_ptr<at::BFloat16>());
    uint16_t* result = reinterpret_cast<uint16_t*>(out.data_ptr<at::BFloat16>());
    at::parallel_for(0, (count + kChunk - 1) / kChunk, 1, [&](int64_t begin, int64_t end) {
      float buffer_in[kChunk], buffer_out[kChunk];
      for (int64_t c = begin; c < end; ++c) {
        const int64_t offset = c * kChunk, n = std::min(kChunk, count - offset);
        bf16_row_to_float(in + offset, buffer_in, n);
        kernel(buffer_in, buffer_out, n);
        float_row_to_bf16(buffer_out, result + offset, n);
      }
    });
  }
  return out;
}

}  // namespace

FLASHPS_VECTOR_CLONES void bf16_row_to_float(const uint16_t* in, float* out, int64_t count) {
#pragma omp simd
  for (int64_t i = 0; i < count; ++i) out[i] = bf16_to_float(in[i]);
}

FLASHPS_VECTOR_CLONES void float_row_to_bf16(const float* in, uint16_t* out, int64_t count) {
#pragma omp simd
  for (int64_t i = 0; i < count; ++i) out[i] = float_to_bf16(in[i]);
}

bool fast_kernels_apply(const at::Tensor& x) {
  return x.device().is_cpu() && (x.scalar_type() == at::kFloat || x.scalar_type() == at::kBFloat16) &&
         !needs_autograd(x);
}

namespace {

FLASHPS_VECTOR_CLONES void softmax_row(float* row, int64_t cols) {
  float maximum = -INFINITY;
#pragma omp simd reduction(max : maximum)
  for (int64_t i = 0; i < cols; ++i) maximum = std::max(maximum, row[i]);
#pragma omp simd
  for (int64_t i = 0; i < cols; ++i) row[i] = std::exp(row[i] - maximum);
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < cols; ++i) sum += row[i];
  const float scale = 1.0f / sum;
#pragma omp simd
  for (int64_t i = 0; i < cols; ++i) row[i] *= scale;
}

}  // namespace

void softmax_rows_inplace(float* data, int64_t rows, int64_t cols) {
  at::parallel_for(0, rows, 8, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) softmax_row(data + r * cols, cols);
  });
}

at::Tensor fast_gelu_tanh(const at::Tensor& x) {
  if (!fast_kernels_apply(x)) return at::gelu(x, "tanh");
  return map_elements(x, gelu_row);
}

at::Tensor fast_rotary(const at::Tensor& input, const at::Tensor& cos, const at::Tensor& sin, int64_t heads) {
  at::Tensor x = input.contiguous();
  at::Tensor cos_table = cos.to(at::kFloat).contiguous(), sin_table = sin.to(at::kFloat).contiguous();
  const int64_t rows = x.size(0), width = x.size(1), head_dim = width / heads, pairs = head_dim / 2;
  if (cos_table.size(0) != rows || cos_table.size(1) != pairs || sin_table.sizes() != cos_table.sizes())
    throw Error("rotary tables do not match the rows or the head size");
  at::Tensor out = at::empty_like(x);
  const float* c = cos_table.data_ptr<float>();
  const float* s = sin_table.data_ptr<float>();
  const bool bf16 = x.scalar_type() == at::kBFloat16;
  at::parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
    std::vector<float> row_in(width), row_out(width);
    for (int64_t r = begin; r < end; ++r) {
      const float* in;
      if (bf16) {
        const uint16_t* source = reinterpret_cast<const uint16_t*>(x.data_ptr<at::BFloat16>()) + r * width;
        bf16_row_to_float(source, row_in.data(), width);
        in = row_in.data();
      } else {
        in = x.data_ptr<float>() + r * width;
      }
      float* result = bf16 ? row_out.data() : out.data_ptr<float>() + r * width;
      const float* cr = c + r * pairs;
      const float* sr = s + r * pairs;
      for (int64_t h = 0; h < heads; ++h) {
        const float* xi = in + h * head_dim;
        float* yi = result + h * head_dim;
#pragma omp simd
        for (int64_t j = 0; j < pairs; ++j) {
          // (x0, x1) -> (x0 cos - x1 sin, x1 cos + x0 sin), one angle per pair.
          yi[2 * j] = xi[2 * j] * cr[j] - xi[2 * j + 1] * sr[j];
          yi[2 * j + 1] = xi[2 * j + 1] * cr[j] + xi[2 * j] * sr[j];
        }
      }
      if (bf16) {
        uint16_t* target = reinterpret_cast<uint16_t*>(out.data_ptr<at::BFloat16>()) + r * width;
        float_row_to_bf16(row_out.data(), target, width);
      }
    }
  });
  return out;
}

namespace {

FLASHPS_VECTOR_CLONES void rms_norm_row(const float* in, const float* weight, float* out, int64_t dim,
                                        float eps) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < dim; ++i) sum += in[i] * in[i];
  const float scale = 1.0f / std::sqrt(sum / static_cast<float>(dim) + eps);
#pragma omp simd
  for (int64_t i = 0; i < dim; ++i) out[i] = in[i] * scale * weight[i];
}

}  // namespace

at::Tensor fast_head_rms_norm(const at::Tensor& x, const at::Tensor& weight, int64_t heads, double eps) {
  at::Tensor input = x.scalar_type() == at::kFloat && x.stride(1) == 1 ? x : x.to(at::kFloat).contiguous();
  at::Tensor scale = weight.to(at::kFloat).contiguous();
  const int64_t rows = input.size(0), width = input.size(1), head_dim = width / heads;
  const int64_t row_stride = input.stride(0);
  at::Tensor out = at::empty({rows, width}, input.options().memory_format(at::MemoryFormat::Contiguous));
  const float* source = input.data_ptr<float>();
  const float* w = scale.data_ptr<float>();
  float* target = out.data_ptr<float>();
  at::parallel_for(0, rows, 32, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      for (int64_t h = 0; h < heads; ++h)
        rms_norm_row(source + r * row_stride + h * head_dim, w, target + r * width + h * head_dim, head_dim,
                     static_cast<float>(eps));
  });
  return out;
}

}  // namespace flashps
