// Encoding float32 values as ggml tensor types (the inverse of ggml_blocks.h), for writing GGUF
// files: random-weight models of any size and quantization, and tests of the decoders.
// The legacy formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0) and F16 / BF16 round as llama.cpp's gguf-py
// (gguf.quants.quantize) does, so a float32 tensor encodes to the same bytes as that reference.
// The K-quants (Q4_K, Q5_K, Q6_K) use a simpler scale choice than ggml's iterative search: each
// sub-block's scale and minimum cover its value range exactly (min/max, no error-weighted search),
// then the 6-bit (Q6_K: 8-bit) sub-block scales are rounded up so no value clips. The bytes are
// valid for every reader; only the rounding error is somewhat larger than llama-quantize's.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/quant/ggml_blocks.h"

namespace flashps {

// True for the types ggml_quantize encodes: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K,
// Q5_K, Q6_K.
bool ggml_can_quantize(GgmlType type);

// Bytes `count` values of `type` take (count must be whole blocks; throws InvalidArgumentError).
size_t ggml_encoded_size(GgmlType type, int64_t count);

// Encodes `count` values (whole blocks: a row's length must be a multiple of the block size)
// into `out` (ggml_encoded_size bytes). Throws InvalidArgumentError for a type it cannot encode
// or a count that is not whole blocks. Non-finite inputs give non-finite scales: callers encode
// weights, which are finite.
void ggml_quantize(GgmlType type, const float* values, int64_t count, uint8_t* out);

}  // namespace flashps
