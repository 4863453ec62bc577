#include "core/quant/ggml_blocks.h"

#include <cstring>
#include <string>

#include "core/diagnostics/error.h"
#include "core/quant/small_floats.h"

// The arithmetic below must round as the reference does: a * b - c evaluated as two roundings,
// never fused into one (CMake compiles this file with -ffp-contract=off).

namespace flashps {
namespace {

constexpr int64_t kSuperBlock = 256;  // QK_K: values per K-quant block

constexpr GgmlTypeTraits kTypes[] = {
    {GgmlType::F32, "F32", 1, 4},        {GgmlType::F16, "F16", 1, 2},
    {GgmlType::BF16, "BF16", 1, 2},      {GgmlType::F64, "F64", 1, 8},
    {GgmlType::Q4_0, "Q4_0", 32, 18},    {GgmlType::Q4_1, "Q4_1", 32, 20},
    {GgmlType::Q5_0, "Q5_0", 32, 22},    {GgmlType::Q5_1, "Q5_1", 32, 24},
    {GgmlType::Q8_0, "Q8_0", 32, 34},    {GgmlType::Q2_K, "Q2_K", kSuperBlock, 84},
    {GgmlType::Q3_K, "Q3_K", kSuperBlock, 110}, {GgmlType::Q4_K, "Q4_K", kSuperBlock, 144},
    {GgmlType::Q5_K, "Q5_K", kSuperBlock, 176}, {GgmlType::Q6_K, "Q6_K", kSuperBlock, 210},
};

// ggml's names of the types this SDK does not decode, so an error can say what the file holds.
const char* unsupported_type_name(uint32_t type) {
  switch (type) {
    case 4: return "Q4_2 (removed from ggml)";
    case 5: return "Q4_3 (removed from ggml)";
    case 9: return "Q8_1";
    case 15: return "Q8_K";
    case 16: return "IQ2_XXS";
    case 17: return "IQ2_XS";
    case 18: return "IQ3_XXS";
    case 19: return "IQ1_S";
    case 20: return "IQ4_NL";
    case 21: return "IQ3_S";
    case 22: return "IQ2_S";
    case 23: return "IQ4_XS";
    case 24: return "I8";
    case 25: return "I16";
    case 26: return "I32";
    case 27: return "I64";
    case 29: return "IQ1_M";
    case 34: return "TQ1_0";
    case 35: return "TQ2_0";
    default: return "unknown";
  }
}

uint16_t read_u16(const uint8_t* bytes) { return uint16_t(bytes[0] | (bytes[1] << 8)); }
uint32_t read_u32(const uint8_t* bytes) {
  return uint32_t(bytes[0]) | uint32_t(bytes[1]) << 8 | uint32_t(bytes[2]) << 16 |
         uint32_t(bytes[3]) << 24;
}
float read_half(const uint8_t* bytes) { return half_to_float(read_u16(bytes)); }

// Q4_0: d (F16), 16 bytes of nibbles; value j is the low nibble of byte j, value j + 16 its high
// nibble; (q - 8) * d.
void q4_0(const uint8_t* block, float* out) {
  const float d = read_half(block);
  const uint8_t* qs = block + 2;
  for (int j = 0; j < 16; ++j) {
    out[j] = d * float(int(qs[j] & 0x0F) - 8);
    out[j + 16] = d * float(int(qs[j] >> 4) - 8);
  }
}

// Q4_1: d, m (F16), nibbles as Q4_0; d * q + m.
void q4_1(const uint8_t* block, float* out) {
  const float d = read_half(block);
  const float m = read_half(block + 2);
  const uint8_t* qs = block + 4;
  for (int j = 0; j < 16; ++j) {
    out[j] = d * float(qs[j] & 0x0F) + m;
    out[j + 16] = d * float(qs[j] >> 4) + m;
  }
}

// Q5_0: d, 32 high bits (bit j = fifth bit of value j), nibbles as Q4_0; (q - 16) * d.
void q5_0(const uint8_t* block, float* out) {
  const float d = read_half(block);
  const uint32_t qh = read_u32(block + 2);
  const uint8_t* qs = block + 6;
  for (int j = 0; j < 16; ++j) {
    const int low = (qs[j] & 0x0F) | int((qh >> j) & 1u) << 4;
    const int high = (qs[j] >> 4) | int((qh >> (j + 16)) & 1u) << 4;
    out[j] = d * float(low - 16);
    out[j + 16] = d * float(high - 16);
  }
}

// Q5_1: d, m, high bits and nibbles as Q5_0; d * q + m.
void q5_1(const uint8_t* block, float* out) {
  const float d = read_half(block);
  const float m = read_half(block + 2);
  const uint32_t qh = read_u32(block + 4);
  const uint8_t* qs = block + 8;
  for (int j = 0; j < 16; ++j) {
    const int low = (qs[j] & 0x0F) | int((qh >> j) & 1u) << 4;
    const int high = (qs[j] >> 4) | int((qh >> (j + 16)) & 1u) << 4;
    out[j] = d * float(low) + m;
    out[j + 16] = d * float(high) + m;
  }
}

// Q8_0: d, 32 signed bytes; q * d.
void q8_0(const uint8_t* block, float* out) {
  const float d = read_half(block);
  for (int j = 0; j < 32; ++j) out[j] = float(int8_t(block[2 + j])) * d;
}

// Q2_K: 16 scale bytes (low nibble scale, high nibble min, per 16 values), 64 bytes of 2-bit
// values, d, dmin. Value p: bits 2k of byte 32c + e (c = p / 128, k = p % 128 / 32, e = p % 32).
void q2_k(const uint8_t* block, float* out) {
  const uint8_t* scales = block;
  const uint8_t* qs = block + 16;
  const float d = read_half(block + 80);
  const float dmin = read_half(block + 82);
  for (int p = 0; p < kSuperBlock; ++p) {
    const int c = p / 128, k = p % 128 / 32, e = p % 32;
    const float dl = d * float(scales[p / 16] & 0x0F);
    const float ml = dmin * float(scales[p / 16] >> 4);
    const int q = (qs[32 * c + e] >> (2 * k)) & 3;
    out[p] = dl * float(q) - ml;
  }
}

// Q3_K: 32 bytes of high-bit masks, 64 bytes of 2-bit values, 12 bytes of 6-bit scales, d.
// A set high bit means no offset; a clear one subtracts 4.
void q3_k(const uint8_t* block, float* out) {
  const uint8_t* hmask = block;
  const uint8_t* qs = block + 32;
  const uint8_t* packed = block + 96;
  const float d = read_half(block + 108);
  float dl[16];
  for (int i = 0; i < 16; ++i) {
    const int low = (packed[i % 8] >> (4 * (i / 8))) & 0x0F;
    const int high = (packed[8 + i % 4] >> (2 * (i / 4))) & 0x03;
    dl[i] = d * float(int8_t(uint8_t(low | high << 4)) - 32);
  }
  for (int p = 0; p < kSuperBlock; ++p) {
    const int c = p / 128, k = p % 128 / 32, e = p % 32;
    const int low = (qs[32 * c + e] >> (2 * k)) & 3;
    const int high_clear = ((hmask[e] >> (p / 32)) & 1) ^ 1;
    out[p] = dl[p / 16] * float(low - (high_clear << 2));
  }
}

// The 6-bit scales and mins of Q4_K / Q5_K: 8 of each packed in 12 bytes.
void k_scale_min(const uint8_t* packed, int scale[8], int min[8]) {
  for (int j = 0; j < 4; ++j) {
    scale[j] = packed[j] & 0x3F;
    min[j] = packed[4 + j] & 0x3F;
    scale[4 + j] = (packed[8 + j] & 0x0F) | ((packed[j] >> 2) & 0x30);
    min[4 + j] = (packed[8 + j] >> 4) | ((packed[4 + j] >> 2) & 0x30);
  }
}

// Q4_K: d, dmin, 12 bytes of scales/mins, 128 bytes of nibbles: 32 bytes give sub-blocks 2c
// (low nibbles) and 2c + 1 (high nibbles); (d * scale) * q - (dmin * min).
void q4_k(const uint8_t* block, float* out) {
  const float d = read_half(block);
  const float dmin = read_half(block + 2);
  int scale[8], min[8];
  k_scale_min(block + 4, scale, min);
  const uint8_t* qs = block + 16;
  for (int s = 0; s < 8; ++s) {
    const float ds = d * float(scale[s]);
    const float dm = dmin * float(min[s]);
    const uint8_t* bytes = qs + 32 * (s / 2);
    const int shift = 4 * (s % 2);
    for (int e = 0; e < 32; ++e) out[32 * s + e] = ds * float((bytes[e] >> shift) & 0x0F) - dm;
  }
}

// Q5_K: as Q4_K, plus 32 bytes of fifth bits: bit s of byte e belongs to value e of sub-block s.
void q5_k(const uint8_t* block, float* out) {
  const float d = read_half(block);
  const float dmin = read_half(block + 2);
  int scale[8], min[8];
  k_scale_min(block + 4, scale, min);
  const uint8_t* qh = block + 16;
  const uint8_t* qs = block + 48;
  for (int s = 0; s < 8; ++s) {
    const float ds = d * float(scale[s]);
    const float dm = dmin * float(min[s]);
    const uint8_t* bytes = qs + 32 * (s / 2);
    const int shift = 4 * (s % 2);
    for (int e = 0; e < 32; ++e) {
      const int q = ((bytes[e] >> shift) & 0x0F) | ((qh[e] >> s) & 1) << 4;
      out[32 * s + e] = ds * float(q) - dm;
    }
  }
}

// Q6_K: 128 bytes of low nibbles, 64 bytes of 2-bit highs, 16 signed scales, d.
// Value p (c = p / 128, r = p % 128): low nibble (r / 64) of ql[64c + r % 64], high bits 2k of
// qh[32c + r % 32] with k = r / 32; (d * scale[p / 16]) * (q - 32).
void q6_k(const uint8_t* block, float* out) {
  const uint8_t* ql = block;
  const uint8_t* qh = block + 128;
  const uint8_t* scales = block + 192;
  const float d = read_half(block + 208);
  for (int p = 0; p < kSuperBlock; ++p) {
    const int c = p / 128, r = p % 128;
    const int low = (ql[64 * c + r % 64] >> (4 * (r / 64))) & 0x0F;
    const int high = (qh[32 * c + r % 32] >> (2 * (r / 32))) & 0x03;
    const float dl = d * float(int8_t(scales[p / 16]));
    out[p] = dl * float(int8_t(uint8_t(low | high << 4)) - 32);
  }
}

}  // namespace

const GgmlTypeTraits* ggml_type_traits(uint32_t type) {
  for (const GgmlTypeTraits& traits : kTypes) {
    if (static_cast<uint32_t>(traits.type) == type) return &traits;
  }
  return nullptr;
}

const char* ggml_type_name(uint32_t type) {
  if (const GgmlTypeTraits* traits = ggml_type_traits(type)) return traits->name;
  return unsupported_type_name(type);
}

void ggml_dequantize(GgmlType type, const uint8_t* blocks, int64_t count, float* out) {
  const GgmlTypeTraits* traits = ggml_type_traits(static_cast<uint32_t>(type));
  if (!traits || count < 0 || count % traits->block_size != 0) {
    throw InvalidArgumentError(std::string("ggml_dequantize: ") + std::to_string(count) +
                               " values are not whole blocks of " + ggml_type_name(uint32_t(type)));
  }
  switch (type) {  // plain floats: one loop over the values
    case GgmlType::F32: std::memcpy(out, blocks, size_t(count) * 4); return;
    case GgmlType::F16:
      for (int64_t i = 0; i < count; ++i) out[i] = read_half(blocks + 2 * i);
      return;
    case GgmlType::BF16:
      for (int64_t i = 0; i < count; ++i) out[i] = bf16_bits_to_float(read_u16(blocks + 2 * i));
      return;
    case GgmlType::F64:
      for (int64_t i = 0; i < count; ++i) {
        double value;
        std::memcpy(&value, blocks + 8 * i, 8);
        out[i] = float(value);
      }
      return;
    default: break;
  }
  void (*decode_block)(const uint8_t*, float*) = nullptr;
  switch (type) {
    case GgmlType::Q4_0: decode_block = q4_0; break;
    case GgmlType::Q4_1: decode_block = q4_1; break;
    case GgmlType::Q5_0: decode_block = q5_0; break;
    case GgmlType::Q5_1: decode_block = q5_1; break;
    case GgmlType::Q8_0: decode_block = q8_0; break;
    case GgmlType::Q2_K: decode_block = q2_k; break;
    case GgmlType::Q3_K: decode_block = q3_k; break;
    case GgmlType::Q4_K: decode_block = q4_k; break;
    case GgmlType::Q5_K: decode_block = q5_k; break;
    case GgmlType::Q6_K: decode_block = q6_k; break;
    default: break;
  }
  const int64_t block_count = count / traits->block_size;
  for (int64_t b = 0; b < block_count; ++b)
    decode_block(blocks + b * traits->type_size, out + b * traits->block_size);
}

}  // namespace flashps
