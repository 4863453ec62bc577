// The tensor types of GGUF files (ggml's types) and their dequantization to float32.
// Quantized types store a row as blocks of `block_size` values in `type_size` bytes; each block
// carries its own scales (F16), so a block decodes alone. The layouts and the arithmetic follow
// ggml's reference dequantizers (gguf-py's gguf.quants): every supported type decodes exactly in
// float32, so the tests compare bit for bit (tests/core/test_ggml_blocks.cpp).
#pragma once
#include <cstddef>
#include <cstdint>

namespace flashps {

// ggml's numbering, as stored in a GGUF tensor's header.
enum class GgmlType : uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8,
  Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14,
  F64 = 28, BF16 = 30,
};

struct GgmlTypeTraits {
  GgmlType type;
  const char* name;   // "Q4_K", as ggml and gguf-py name it
  int64_t block_size;  // values per block (1 for plain floats)
  int64_t type_size;   // bytes per block
};

// The traits of a type this SDK decodes, or nullptr (an unknown or unsupported type number).
const GgmlTypeTraits* ggml_type_traits(uint32_t type);
// "type 17 (IQ2_XS)": a name for error messages, also for types this SDK does not decode.
const char* ggml_type_name(uint32_t type);

// Decodes `count` values (a multiple of the type's block size) from `blocks` into `out`.
void ggml_dequantize(GgmlType type, const uint8_t* blocks, int64_t count, float* out);

}  // namespace flashps
