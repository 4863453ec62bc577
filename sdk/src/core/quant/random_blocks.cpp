#include "core/quant/random_blocks.h"

#include <random>

#include "core/diagnostics/error.h"

namespace flashps {
namespace {

// Byte offsets of the F16 scales (d, dmin, m) inside one block of each ggml type.
std::vector<int> random_block_scale_offsets(GgmlType type) {
  switch (type) {
    case GgmlType::Q4_0: case GgmlType::Q5_0: case GgmlType::Q8_0: return {0};
    case GgmlType::Q4_1: case GgmlType::Q5_1: case GgmlType::Q4_K: case GgmlType::Q5_K: return {0, 2};
    case GgmlType::Q2_K: return {80, 82};
    case GgmlType::Q3_K: return {108};
    case GgmlType::Q6_K: return {208};
    default: break;
  }
  throw InvalidArgumentError(std::string("random_quantized_rows: no random blocks for ") +
                             ggml_type_name(uint32_t(type)));
}

}  // namespace

std::vector<uint8_t> random_quantized_rows(const QuantizedEncoding& encoding, int64_t rows, int64_t cols,
                                           uint64_t seed) {
  const int64_t block_values = encoding.block_values();
  if (block_values <= 0 || cols % block_values != 0)
    throw InvalidArgumentError("random_quantized_rows: " + std::to_string(cols) + " values are not whole " +
                               encoding.name() + " blocks");
  const int64_t blocks = rows * (cols / block_values), block_bytes = encoding.block_bytes();
  std::vector<uint8_t> bytes(size_t(blocks * block_bytes));
  std::mt19937_64 generator(seed);
  for (uint8_t& byte : bytes) byte = uint8_t(generator());
  if (encoding.kind == QuantizedEncoding::Kind::float8_e4m3fn) {
    for (uint8_t& byte : bytes)
      if ((byte & 0x7F) == 0x7F) byte = 0;  // NaN codes
    return bytes;
  }
  if (encoding.kind == QuantizedEncoding::Kind::float8_e5m2) {
    for (uint8_t& byte : bytes)
      if ((byte & 0x7C) == 0x7C) byte = 0;  // exponent 31: infinity and NaN
    return bytes;
  }
  const std::vector<int> offsets = random_block_scale_offsets(encoding.ggml_type);
  for (int64_t block = 0; block < blocks; ++block) {
    for (int offset : offsets) {
      // Exponent 7 or 8 (bias 15), any mantissa: 2^-8 <= value < 2^-6, positive.
      const uint16_t half = uint16_t((7 + generator() % 2) << 10 | (generator() & 0x3FF));
      uint8_t* scale = bytes.data() + block * block_bytes + offset;
      scale[0] = uint8_t(half & 0xFF);
      scale[1] = uint8_t(half >> 8);
    }
  }
  return bytes;
}

}  // namespace flashps
