#include "core/quant/ggml_quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "core/diagnostics/error.h"
#include "core/quant/small_floats.h"

// The legacy formats must round as gguf-py does (float32 steps, each rounded; never fused into an
// FMA: CMake compiles this file with -ffp-contract=off), so a weight encodes to the reference bytes.

namespace flashps {
namespace {

constexpr int kSuper = 256;  // values per K-quant block

void put_half(uint8_t* at, float value) {
  const uint16_t half = float_to_half(value);
  at[0] = uint8_t(half & 0xFF);
  at[1] = uint8_t(half >> 8);
}

// The value of largest magnitude, with its sign (the first one on ties), as numpy's argmax picks.
float signed_absmax(const float* x, int n) {
  float best = x[0];
  for (int i = 1; i < n; ++i)
    if (std::fabs(x[i]) > std::fabs(best)) best = x[i];
  return best;
}

// Q4_0 / Q5_0: d = max / -half_levels; q = trunc(float(x * id + half_levels + 0.5)), computed in
// double and rounded to float before the truncation (gguf-py's "cursed" reference rounding).
void symmetric_levels(const float* x, int levels, float* d_out, uint8_t* q) {
  const float max = signed_absmax(x, 32);
  const float d = max / -float(levels / 2);
  const float id = d == 0.0f ? 0.0f : 1.0f / d;
  for (int j = 0; j < 32; ++j) {
    const float shifted = float(double(x[j]) * double(id) + (double(levels / 2) + 0.5));
    q[j] = uint8_t(std::clamp(std::trunc(shifted), 0.0f, float(levels - 1)));
  }
  *d_out = d;
}

// Q4_1 / Q5_1: d = (max - min) / (levels - 1); q = trunc((x - min) * id + 0.5), all in float32.
void offset_levels(const float* x, int levels, float* d_out, float* min_out, uint8_t* q) {
  const float max = *std::max_element(x, x + 32), min = *std::min_element(x, x + 32);
  const float d = (max - min) / float(levels - 1);
  const float id = d == 0.0f ? 0.0f : 1.0f / d;
  for (int j = 0; j < 32; ++j) {
    const float scaled = (x[j] - min) * id;
    q[j] = uint8_t(std::clamp(std::trunc(scaled + 0.5f), 0.0f, float(levels - 1)));
  }
  *d_out = d;
  *min_out = min;
}

// Nibbles as the decoders read them: value j low, value j + 16 high.
void pack_nibbles(const uint8_t* q, uint8_t* out) {
  for (int j = 0; j < 16; ++j) out[j] = uint8_t((q[j] & 0x0F) | (q[j + 16] << 4));
}
void pack_fifth_bits(const uint8_t* q, uint8_t* out) {
  uint32_t bits = 0;
  for (int j = 0; j < 32; ++j) bits |= uint32_t((q[j] >> 4) & 1u) << j;
  for (int b = 0; b < 4; ++b) out[b] = uint8_t(bits >> (8 * b));
}

void q4_0(const float* x, uint8_t* out) {
  float d;
  uint8_t q[32];
  symmetric_levels(x, 16, &d, q);
  put_half(out, d);
  pack_nibbles(q, out + 2);
}

void q5_0(const float* x, uint8_t* out) {
  float d;
  uint8_t q[32];
  symmetric_levels(x, 32, &d, q);
  put_half(out, d);
  pack_fifth_bits(q, out + 2);
  pack_nibbles(q, out + 6);
}

void q4_1(const float* x, uint8_t* out) {
  float d, min;
  uint8_t q[32];
  offset_levels(x, 16, &d, &min, q);
  put_half(out, d);
  put_half(out + 2, min);
  pack_nibbles(q, out + 4);
}

void q5_1(const float* x, uint8_t* out) {
  float d, min;
  uint8_t q[32];
  offset_levels(x, 32, &d, &min, q);
  put_half(out, d);
  put_half(out + 2, min);
  pack_fifth_bits(q, out + 4);
  pack_nibbles(q, out + 8);
}

// Q8_0: d = max|x| / 127; q = x * id rounded half away from zero.
void q8_0(const float* x, uint8_t* out) {
  float amax = 0.0f;
  for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / 127.0f;
  const float id = d == 0.0f ? 0.0f : 1.0f / d;
  put_half(out, d);
  for (int j = 0; j < 32; ++j) out[2 + j] = uint8_t(int8_t(std::round(x[j] * id)));
}

// The smallest half-precision value >= `value` (>= 0), as a float: a scale stored in F16 that is
// never below the one computed, so values scaled by it never clip.
float half_at_least(float value) {
  uint16_t half = float_to_half(value);
  if (half_to_float(half) < value) ++half;
  return half_to_float(half);
}

// Q4_K / Q5_K: 8 sub-blocks of 32 values, each x = d * scale * q - dmin * min with 6-bit scale and
// min. A sub-block's range [lo, hi] (lo <= 0, as ggml keeps mins >= 0) must fit in `top` steps:
// the min rounds up (reaching below lo), then the scale rounds up to reach hi from there.
void k_quant_offset(const float* x, int top, uint8_t* header, uint8_t* q) {
  float lo[8], hi[8], max_min = 0.0f, max_step = 0.0f;
  for (int s = 0; s < 8; ++s) {
    lo[s] = std::min(0.0f, *std::min_element(x + 32 * s, x + 32 * s + 32));
    hi[s] = std::max(lo[s], *std::max_element(x + 32 * s, x + 32 * s + 32));
    max_min = std::max(max_min, -lo[s]);
  }
  const float dmin = half_at_least(max_min / 63.0f);
  int scale[8], min[8];
  for (int s = 0; s < 8; ++s) {
    min[s] = dmin == 0.0f ? 0 : std::min(63, int(std::ceil(-lo[s] / dmin)));
    max_step = std::max(max_step, (hi[s] + dmin * float(min[s])) / float(top));
  }
  const float d = half_at_least(max_step / 63.0f);
  for (int s = 0; s < 8; ++s) {
    const float reach = hi[s] + dmin * float(min[s]);
    scale[s] = d == 0.0f ? 0 : std::min(63, int(std::ceil(reach / (d * float(top)))));
  }
  put_half(header, d);
  put_half(header + 2, dmin);
  uint8_t* packed = header + 4;  // the inverse of ggml_blocks.cpp's k_scale_min
  for (int j = 0; j < 4; ++j) {
    packed[j] = uint8_t(scale[j] | ((scale[4 + j] >> 4) << 6));
    packed[4 + j] = uint8_t(min[j] | ((min[4 + j] >> 4) << 6));
    packed[8 + j] = uint8_t((scale[4 + j] & 0x0F) | ((min[4 + j] & 0x0F) << 4));
  }
  for (int s = 0; s < 8; ++s) {
    const float step = d * float(scale[s]), offset = dmin * float(min[s]);
    for (int e = 0; e < 32; ++e) {
      const float level = step == 0.0f ? 0.0f : std::nearbyint((x[32 * s + e] + offset) / step);
      q[32 * s + e] = uint8_t(std::clamp(level, 0.0f, float(top)));
    }
  }
}

void q4_k(const float* x, uint8_t* out) {
  uint8_t q[kSuper];
  k_quant_offset(x, 15, out, q);
  uint8_t* qs = out + 16;
  for (int s = 0; s < 8; s += 2)
    for (int e = 0; e < 32; ++e) qs[16 * s + e] = uint8_t(q[32 * s + e] | (q[32 * (s + 1) + e] << 4));
}

void q5_k(const float* x, uint8_t* out) {
  uint8_t q[kSuper];
  k_quant_offset(x, 31, out, q);
  uint8_t* qh = out + 16;
  uint8_t* qs = out + 48;
  std::memset(qh, 0, 32);
  for (int s = 0; s < 8; ++s)
    for (int e = 0; e < 32; ++e) qh[e] = uint8_t(qh[e] | (((q[32 * s + e] >> 4) & 1) << s));
  for (int s = 0; s < 8; s += 2)
    for (int e = 0; e < 32; ++e)
      qs[16 * s + e] = uint8_t((q[32 * s + e] & 0x0F) | ((q[32 * (s + 1) + e] & 0x0F) << 4));
}

// Q6_K: 16 sub-blocks of 16, x = d * scale * (q - 32) with signed 8-bit scales. Each sub-block's
// step covers its largest magnitude in 31 levels (both signs); the scale rounds up.
void q6_k(const float* x, uint8_t* out) {
  float amax[16], max_step = 0.0f;
  for (int s = 0; s < 16; ++s) {
    amax[s] = 0.0f;
    for (int e = 0; e < 16; ++e) amax[s] = std::max(amax[s], std::fabs(x[16 * s + e]));
    max_step = std::max(max_step, amax[s] / 31.0f);
  }
  const float d = half_at_least(max_step / 127.0f);
  int8_t scale[16];
  uint8_t q[kSuper];
  for (int s = 0; s < 16; ++s) {
    scale[s] = int8_t(d == 0.0f ? 0 : std::min(127, int(std::ceil(amax[s] / (31.0f * d)))));
    const float step = d * float(scale[s]);
    for (int e = 0; e < 16; ++e) {
      const float level = step == 0.0f ? 0.0f : std::nearbyint(x[16 * s + e] / step);
      q[16 * s + e] = uint8_t(std::clamp(level, -32.0f, 31.0f) + 32.0f);
    }
  }
  uint8_t* ql = out;
  uint8_t* qh = out + 128;
  std::memset(out, 0, 192);
  for (int p = 0; p < kSuper; ++p) {  // the inverse of ggml_blocks.cpp's q6_k
    const int c = p / 128, r = p % 128;
    ql[64 * c + r % 64] = uint8_t(ql[64 * c + r % 64] | ((q[p] & 0x0F) << (4 * (r / 64))));
    qh[32 * c + r % 32] = uint8_t(qh[32 * c + r % 32] | ((q[p] >> 4) << (2 * (r / 32))));
  }
  std::memcpy(out + 192, scale, 16);
  put_half(out + 208, d);
}

}  // namespace

bool ggml_can_quantize(GgmlType type) {
  switch (type) {
    case GgmlType::F32: case GgmlType::F16: case GgmlType::BF16: case GgmlType::Q4_0: case GgmlType::Q4_1:
    case GgmlType::Q5_0: case GgmlType::Q5_1: case GgmlType::Q8_0: case GgmlType::Q4_K: case GgmlType::Q5_K:
    case GgmlType::Q6_K:
      return true;
    default: return false;
  }
}

size_t ggml_encoded_size(GgmlType type, int64_t count) {
  const GgmlTypeTraits* traits = ggml_type_traits(uint32_t(type));
  if (!traits || count < 0 || count % traits->block_size != 0)
    throw InvalidArgumentError(std::string("ggml_encoded_size: ") + std::to_string(count) +
                               " values are not whole blocks of " + ggml_type_name(uint32_t(type)));
  return size_t(count / traits->block_size) * size_t(traits->type_size);
}

void ggml_quantize(GgmlType type, const float* values, int64_t count, uint8_t* out) {
  if (!ggml_can_quantize(type))
    throw InvalidArgumentError(std::string("ggml_quantize: cannot encode ") + ggml_type_name(uint32_t(type)));
  ggml_encoded_size(type, count);  // checks whole blocks
  switch (type) {
    case GgmlType::F32: std::memcpy(out, values, size_t(count) * 4); return;
    case GgmlType::F16:
      for (int64_t i = 0; i < count; ++i) put_half(out + 2 * i, values[i]);
      return;
    case GgmlType::BF16:
      for (int64_t i = 0; i < count; ++i) {
        const uint16_t bits = float_to_bf16_bits(values[i]);
        out[2 * i] = uint8_t(bits & 0xFF);
        out[2 * i + 1] = uint8_t(bits >> 8);
      }
      return;
    default: break;
  }
  void (*encode_block)(const float*, uint8_t*) = nullptr;
  switch (type) {
    case GgmlType::Q4_0: encode_block = q4_0; break;
    case GgmlType::Q4_1: encode_block = q4_1; break;
    case GgmlType::Q5_0: encode_block = q5_0; break;
    case GgmlType::Q5_1: encode_block = q5_1; break;
    case GgmlType::Q8_0: encode_block = q8_0; break;
    case GgmlType::Q4_K: encode_block = q4_k; break;
    case GgmlType::Q5_K: encode_block = q5_k; break;
    case GgmlType::Q6_K: encode_block = q6_k; break;
    default: break;
  }
  const GgmlTypeTraits* traits = ggml_type_traits(uint32_t(type));
  for (int64_t b = 0; b < count / traits->block_size; ++b)
    encode_block(values + b * traits->block_size, out + b * traits->type_size);
}

}  // namespace flashps
