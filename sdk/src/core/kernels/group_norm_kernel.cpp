#include "core/kernels/group_norm_kernel.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/kernels/autograd_mode.h"
#include "core/diagnostics/error.h"
#include "core/kernels/fast_kernels.h"

namespace flashps {
namespace {

constexpr int64_t kRowChunk = 4096;  // elements of a contiguous row summed in float32 at a time
constexpr int64_t kPixelChunk = 256;  // channels-last pixels per task

// Channels-last: one pixel's channels (x - shift) added into per-channel sums and squares.
FLASHPS_VECTOR_CLONES void accumulate_pixel(const float* x, const float* shift, float* sums, float* squares,
                                            int64_t count) {
#pragma omp simd
  for (int64_t i = 0; i < count; ++i) {
    const float y = x[i] - shift[i];
    sums[i] += y;
    squares[i] += y * y;
  }
}

// Contiguous: the sum and sum of squares of (x - shift) over a row piece.
FLASHPS_VECTOR_CLONES void row_moments(const float* x, float shift, int64_t count, float* sum_out, float* squares_out) {
  float sum = 0.0f, squares = 0.0f;
#pragma omp simd reduction(+ : sum, squares)
  for (int64_t i = 0; i < count; ++i) {
    const float y = x[i] - shift;
    sum += y;
    squares += y * y;
  }
  *sum_out = sum;
  *squares_out = squares;
}

// out = x * scale + offset (then SiLU), per channel (channels-last pixel) ...
FLASHPS_VECTOR_CLONES void affine_pixel(const float* x, const float* scale, const float* offset, float* out,
                                        int64_t count, bool silu) {
  if (silu) {
#pragma omp simd
    for (int64_t i = 0; i < count; ++i) {  // written out in the loop so that tanhf vectorises
      const float y = x[i] * scale[i] + offset[i];
      out[i] = y * (0.5f + 0.5f * std::tanh(0.5f * y));  // y * sigmoid(y)
    }
  } else {
#pragma omp simd
    for (int64_t i = 0; i < count; ++i) out[i] = x[i] * scale[i] + offset[i];
  }
}

// ... or for one channel's row (contiguous layout).
FLASHPS_VECTOR_CLONES void affine_row(const float* x, float scale, float offset, float* out, int64_t count, bool silu) {
  if (silu) {
#pragma omp simd
    for (int64_t i = 0; i < count; ++i) {
      const float y = x[i] * scale + offset;
      out[i] = y * (0.5f + 0.5f * std::tanh(0.5f * y));  // y * sigmoid(y)
    }
  } else {
#pragma omp simd
    for (int64_t i = 0; i < count; ++i) out[i] = x[i] * scale + offset;
  }
}

// Reads and writes float32 rows of the input and output, whatever their dtype.
class RowAccess {
 public:
  RowAccess(const at::Tensor& input, at::Tensor& output) : bf16_(input.scalar_type() == at::kBFloat16) {
    if (bf16_) {
      in16_ = reinterpret_cast<const uint16_t*>(input.data_ptr<at::BFloat16>());
      out16_ = reinterpret_cast<uint16_t*>(output.data_ptr<at::BFloat16>());
    } else {
      in32_ = input.data_ptr<float>();
      out32_ = output.data_ptr<float>();
    }
  }
  // The row's values as float32 (converted into `buffer` for bf16).
  const float* load(int64_t offset, int64_t count, float* buffer) const {
    if (!bf16_) return in32_ + offset;
    bf16_row_to_float(in16_ + offset, buffer, count);
    return buffer;
  }
  float value(int64_t offset) const {
    if (!bf16_) return in32_[offset];
    float result;
    bf16_row_to_float(in16_ + offset, &result, 1);
    return result;
  }
  // Where to write a row's float32 results: straight into a float32 output, else `buffer`.
  float* target(int64_t offset, float* buffer) const { return bf16_ ? buffer : out32_ + offset; }
  void store(int64_t offset, int64_t count, const float* buffer) const {
    if (bf16_) float_row_to_bf16(buffer, out16_ + offset, count);
  }

 private:
  bool bf16_;
  const float* in32_ = nullptr;
  float* out32_ = nullptr;
  const uint16_t* in16_ = nullptr;
  uint16_t* out16_ = nullptr;
};

std::vector<float> affine_parameter(const at::Tensor& parameter, int64_t channels, float fallback,
                                    const char* name) {
  if (!parameter.defined() || parameter.numel() == 0) return std::vector<float>(channels, fallback);
  if (parameter.numel() != channels)
    throw Error(std::string("group norm: ") + name + " has " + std::to_string(parameter.numel()) +
                " values for " + std::to_string(channels) + " channels");
  const at::Tensor values = parameter.to(at::kCPU, at::kFloat).contiguous();
  return std::vector<float>(values.data_ptr<float>(), values.data_ptr<float>() + channels);
}

}  // namespace

bool group_norm_kernel_applies(const at::Tensor& input) {
  return input.defined() && input.device().is_cpu() && input.dim() >= 3 &&
         (input.scalar_type() == at::kFloat || input.scalar_type() == at::kBFloat16) && !needs_autograd(input);
}

at::Tensor group_norm_cpu(const at::Tensor& input, int64_t groups, const at::Tensor& weight, const at::Tensor& bias,
                          double eps, bool silu) {
  if (!group_norm_kernel_applies(input)) throw Error("group norm: expected a CPU float32 or bf16 [B, C, ...] tensor");
  const int64_t batch = input.size(0), channels = input.size(1);
  if (groups <= 0 || channels % groups)
    throw Error("group norm: " + std::to_string(channels) + " channels do not split into " + std::to_string(groups) +
                " groups");
  const bool channels_last = input.dim() == 4 && !input.is_contiguous() && input.is_contiguous(at::MemoryFormat::ChannelsLast);
  const at::Tensor x = channels_last ? input : input.contiguous();
  at::Tensor out = at::empty_like(x, channels_last ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous);
  if (x.numel() == 0) return out;
  const int64_t pixels = x.numel() / (batch * channels), per_group = channels / groups;
  const std::vector<float> gamma = affine_parameter(weight, channels, 1.0f, "weight");
  const std::vector<float> beta = affine_parameter(bias, channels, 0.0f, "bias");
  const RowAccess rows(x, out);
  const auto element = [&](int64_t b, int64_t c, int64_t p) {
    return channels_last ? (b * pixels + p) * channels + c : (b * channels + c) * pixels + p;
  };

  // A per-group shift near the group's mean, from up to 16 evenly spaced pixels: the sums below
  // are of x - shift, so nothing large cancels.
  std::vector<float> shift(batch * channels);  // per (b, c): its group's shift
  const int64_t samples = std::min<int64_t>(16, pixels);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t g = 0; g < groups; ++g) {
      double total = 0;
      for (int64_t c = g * per_group; c < (g + 1) * per_group; ++c)
        for (int64_t s = 0; s < samples; ++s) total += rows.value(element(b, c, s * pixels / samples));
      std::fill_n(shift.begin() + b * channels + g * per_group, per_group, float(total / double(per_group * samples)));
    }

  // Pass 1: per-channel sums of (x - shift) and of its square, in double across pieces.
  std::vector<double> sums(batch * channels, 0.0), squares(batch * channels, 0.0);
  if (channels_last) {
    const int64_t chunks = (pixels + kPixelChunk - 1) / kPixelChunk;
    std::vector<float> partial(batch * chunks * 2 * channels, 0.0f);  // per task: sums, then squares
    at::parallel_for(0, batch * chunks, 1, [&](int64_t begin, int64_t end) {
      std::vector<float> buffer(channels);
      for (int64_t task = begin; task < end; ++task) {
        const int64_t b = task / chunks, first = (task % chunks) * kPixelChunk;
        float* task_sums = partial.data() + task * 2 * channels;
        for (int64_t p = first; p < std::min(pixels, first + kPixelChunk); ++p)
          accumulate_pixel(rows.load(element(b, 0, p), channels, buffer.data()), shift.data() + b * channels,
                           task_sums, task_sums + channels, channels);
      }
    });
    for (int64_t task = 0; task < batch * chunks; ++task) {
      const int64_t b = task / chunks;
      for (int64_t c = 0; c < channels; ++c) {
        sums[b * channels + c] += partial[task * 2 * channels + c];
        squares[b * channels + c] += partial[task * 2 * channels + channels + c];
      }
    }
  } else {
    at::parallel_for(0, batch * channels, 1, [&](int64_t begin, int64_t end) {
      std::vector<float> buffer(kRowChunk);
      for (int64_t row = begin; row < end; ++row)
        for (int64_t first = 0; first < pixels; first += kRowChunk) {
          const int64_t count = std::min(kRowChunk, pixels - first);
          float sum, square;
          row_moments(rows.load(row * pixels + first, count, buffer.data()), shift[row], count, &sum, &square);
          sums[row] += sum;
          squares[row] += square;
        }
    });
  }

  // The groups' statistics, folded with the affine parameters into a scale and offset per channel.
  std::vector<float> scale(batch * channels), offset(batch * channels);
  const double count = double(per_group * pixels);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t g = 0; g < groups; ++g) {
      double sum = 0, square = 0;
      for (int64_t c = g * per_group; c < (g + 1) * per_group; ++c) {
        sum += sums[b * channels + c];
        square += squares[b * channels + c];
      }
      const double shifted_mean = sum / count;
      const double variance = std::max(0.0, square / count - shifted_mean * shifted_mean);
      const double mean = shift[b * channels + g * per_group] + shifted_mean;
      const double inverse_std = 1.0 / std::sqrt(variance + eps);
      for (int64_t c = g * per_group; c < (g + 1) * per_group; ++c) {
        scale[b * channels + c] = float(inverse_std * gamma[c]);
        offset[b * channels + c] = float(beta[c] - mean * inverse_std * gamma[c]);
      }
    }

  // Pass 2: normalise, apply the affine transform (and SiLU), write the input's dtype.
  if (channels_last) {
    const int64_t chunks = (pixels + kPixelChunk - 1) / kPixelChunk;
    at::parallel_for(0, batch * chunks, 1, [&](int64_t begin, int64_t end) {
      std::vector<float> buffer_in(channels), buffer_out(channels);
      for (int64_t task = begin; task < end; ++task) {
        const int64_t b = task / chunks, first = (task % chunks) * kPixelChunk;
        for (int64_t p = first; p < std::min(pixels, first + kPixelChunk); ++p) {
          const int64_t at = element(b, 0, p);
          affine_pixel(rows.load(at, channels, buffer_in.data()), scale.data() + b * channels,
                       offset.data() + b * channels, rows.target(at, buffer_out.data()), channels, silu);
          rows.store(at, channels, buffer_out.data());
        }
      }
    });
  } else {
    at::parallel_for(0, batch * channels, 1, [&](int64_t begin, int64_t end) {
      std::vector<float> buffer_in(kRowChunk), buffer_out(kRowChunk);
      for (int64_t row = begin; row < end; ++row)
        for (int64_t first = 0; first < pixels; first += kRowChunk) {
          const int64_t n = std::min(kRowChunk, pixels - first), at = row * pixels + first;
          affine_row(rows.load(at, n, buffer_in.data()), scale[row], offset[row], rows.target(at, buffer_out.data()),
                     n, silu);
          rows.store(at, n, buffer_out.data());
        }
    });
  }
  return out;
}

}  // namespace flashps
