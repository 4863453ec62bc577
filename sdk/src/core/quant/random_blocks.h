// Random stored rows of a quantized encoding, for tests and benchmarks of the block-wise products
// (not for weights anyone runs: encoders of real values are in ggml_quantize.h). Every block gets
// finite scales (F16 values in [2^-8, 2^-6)); float8 codes avoid NaN and infinity.
#pragma once
#include <cstdint>
#include <vector>

#include "core/quant/quantized_matrix.h"

namespace flashps {

// rows * cols values as stored (cols whole blocks), deterministic in `seed`.
std::vector<uint8_t> random_quantized_rows(const QuantizedEncoding& encoding, int64_t rows, int64_t cols,
                                           uint64_t seed);

}  // namespace flashps
