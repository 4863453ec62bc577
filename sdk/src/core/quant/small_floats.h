// Decoding the small floating-point formats model files store weights in: IEEE half (F16),
// bfloat16 (BF16) and the two float8 formats (F8_E4M3 "e4m3fn", F8_E5M2). Each value decodes
// exactly to a float32, so a decoder either matches a reference bit for bit or is wrong.
#pragma once
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

}  // namespace flashps
