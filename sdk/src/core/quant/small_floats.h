// Decoding the small floating-point formats model files store weights in: IEEE half (F16),
// bfloat16 (BF16) and the two float8 formats (F8_E4M3 "e4m3fn", F8_E5M2). Each value decodes
// exactly to a float32, so a decoder either matches a reference bit for bit or is wrong.
// The encoders at the end round to nearest, ties to even, as PyTorch's and numpy's conversions do.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

namespace flashps {

inline float float_from_bits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// IEEE 754 binary16: sign, 5 exponent bits (bias 15), 10 mantissa bits; subnormals, inf, NaN.
inline float half_to_float(uint16_t half) {
  const uint32_t sign = uint32_t(half & 0x8000u) << 16;
  const uint32_t exponent = (half >> 10) & 0x1Fu;
  uint32_t mantissa = half & 0x3FFu;
  if (exponent == 0x1F) return float_from_bits(sign | 0x7F800000u | (mantissa << 13));
  if (exponent != 0) return float_from_bits(sign | ((exponent + 112) << 23) | (mantissa << 13));
  if (mantissa == 0) return float_from_bits(sign);
  // Subnormal: normalise the mantissa (value = mantissa * 2^-24).
  int shift = 0;
  while ((mantissa & 0x400u) == 0) {
    mantissa <<= 1;
    ++shift;
  }
  return float_from_bits(sign | (uint32_t(113 - shift) << 23) | ((mantissa & 0x3FFu) << 13));
}

// bfloat16 is the upper half of a float32.
inline float bf16_bits_to_float(uint16_t value) { return float_from_bits(uint32_t(value) << 16); }

// float8_e4m3fn: sign bit 7, exponent bits 6-3 (bias 7), mantissa bits 2-0; no infinities,
// 0x7F / 0xFF are NaN.
inline float float8_e4m3fn_to_float(uint8_t value) {
  const uint32_t sign = uint32_t(value & 0x80u) << 24;
  const uint32_t exponent = (value >> 3) & 0xFu;
  uint32_t mantissa = value & 0x7u;
  if (exponent == 0xF && mantissa == 0x7) return float_from_bits(sign | 0x7FC00000u);
  if (exponent != 0) return float_from_bits(sign | ((exponent + 120) << 23) | (mantissa << 20));
  if (mantissa == 0) return float_from_bits(sign);
  int shift = 0;  // subnormal: mantissa * 2^-9
  while ((mantissa & 0x8u) == 0) {
    mantissa <<= 1;
    ++shift;
  }
  return float_from_bits(sign | (uint32_t(121 - shift) << 23) | ((mantissa & 0x7u) << 20));
}

// float8_e5m2: the upper byte of an IEEE half.
inline float float8_e5m2_to_float(uint8_t value) { return half_to_float(uint16_t(value) << 8); }

inline uint32_t bits_of_float(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

namespace small_float_detail {

// Rounds the magnitude bits `magnitude` of a normal float32 to `mantissa_bits` mantissa bits (ties
// to even) and rebiases its exponent by `bias_difference` (127 - the format's bias): the result's
// low bits are the format's exponent and mantissa; a carry out of the mantissa raises the exponent.
inline uint32_t round_normal(uint32_t magnitude, int mantissa_bits, uint32_t bias_difference) {
  const int dropped = 23 - mantissa_bits;
  const uint32_t odd = (magnitude >> dropped) & 1u;
  magnitude += ((1u << (dropped - 1)) - 1u) + odd;
  return (magnitude - (bias_difference << 23)) >> dropped;
}

// A magnitude below the format's smallest normal: a multiple of its subnormal step 2^-`step_log2`,
// rounded to nearest even (scaling by a power of two is exact; nearbyint rounds ties to even).
inline uint32_t round_subnormal(uint32_t magnitude, int step_log2) {
  return static_cast<uint32_t>(std::nearbyint(std::ldexp(float_from_bits(magnitude), step_log2)));
}

}  // namespace small_float_detail

// float32 -> IEEE half: overflow (>= 65520) to infinity, NaN stays a (quiet) NaN.
inline uint16_t float_to_half(float value) {
  const uint32_t bits = bits_of_float(value);
  const uint16_t sign = uint16_t((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) return uint16_t(sign | 0x7E00u | ((magnitude >> 13) & 0x1FFu));
  if (magnitude >= 0x477FF000u) return uint16_t(sign | 0x7C00u);  // rounds past 65504
  if (magnitude < 0x38800000u) return uint16_t(sign | small_float_detail::round_subnormal(magnitude, 24));
  return uint16_t(sign | small_float_detail::round_normal(magnitude, 10, 127 - 15));
}

// float32 -> bfloat16 bits: the upper half rounded to nearest even; NaN stays a quiet NaN.
inline uint16_t float_to_bf16_bits(float value) {
  const uint32_t bits = bits_of_float(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return uint16_t((bits >> 16) | 0x0040u);
  return uint16_t((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

// float32 -> float8_e4m3fn as PyTorch's `.to(torch.float8_e4m3fn)`: no saturation; magnitudes that
// round above 448 (> 464, and infinities) become NaN (0x7F with the sign), as does NaN.
inline uint8_t float_to_float8_e4m3fn(float value) {
  const uint32_t bits = bits_of_float(value);
  const uint8_t sign = uint8_t((bits >> 24) & 0x80u);
  const uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude >= 0x43F00000u) return uint8_t(sign | 0x7Fu);  // >= 480, inf, NaN
  if (magnitude < 0x3C800000u) return uint8_t(sign | small_float_detail::round_subnormal(magnitude, 9));
  return uint8_t(sign | small_float_detail::round_normal(magnitude, 3, 127 - 7));
}

// float32 -> float8_e5m2 as PyTorch's `.to(torch.float8_e5m2)`: magnitudes that round above
// 57344 become infinity, NaN stays NaN (0x7F with the sign).
inline uint8_t float_to_float8_e5m2(float value) {
  const uint32_t bits = bits_of_float(value);
  const uint8_t sign = uint8_t((bits >> 24) & 0x80u);
  const uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) return uint8_t(sign | 0x7Fu);
  if (magnitude >= 0x47800000u) return uint8_t(sign | 0x7Cu);  // >= 65536, inf
  if (magnitude < 0x38800000u) return uint8_t(sign | small_float_detail::round_subnormal(magnitude, 16));
  return uint8_t(sign | small_float_detail::round_normal(magnitude, 2, 127 - 15));
}

}  // namespace flashps
