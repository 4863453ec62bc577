// A weight matrix [rows, cols] kept as a file stores it: ggml blocks (Q8_0, Q4_K, ...) or float8
// values (with a per-tensor scale, as ComfyUI's "scaled fp8" files carry one), in row segments
// that point into memory an owner keeps alive (the memory-mapped file). Nothing is decoded at
// load: a matrix product decodes a chunk of rows at a time into scratch and multiplies that, so
// a 12B-parameter model in Q4 stays about its file's size in memory.
// A quantized row is whole blocks, so a range of rows (q of a stored qkv) is a range of bytes and
// concatenating matrices (q, k and v run as one product) is concatenating their segment lists.
#pragma once
#include <ATen/Tensor.h>
#include <c10/util/BFloat16.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/quant/ggml_blocks.h"

namespace flashps {

struct QuantizedEncoding {
  enum class Kind { ggml, float8_e4m3fn, float8_e5m2 };
  Kind kind = Kind::ggml;
  GgmlType ggml_type = GgmlType::Q8_0;  // when kind == ggml

  static QuantizedEncoding ggml(GgmlType type) { return {Kind::ggml, type}; }
  static QuantizedEncoding float8_e4m3fn() { return {Kind::float8_e4m3fn, GgmlType::F32}; }
  static QuantizedEncoding float8_e5m2() { return {Kind::float8_e5m2, GgmlType::F32}; }
  int64_t block_values() const;  // values per block (1 for float8)
  int64_t block_bytes() const;   // bytes per block
  std::string name() const;      // "Q4_K", "F8_E4M3"
  bool operator==(const QuantizedEncoding& other) const {
    return kind == other.kind && (kind != Kind::ggml || ggml_type == other.ggml_type);
  }
  bool operator!=(const QuantizedEncoding& other) const { return !(*this == other); }
};

// `rows` consecutive rows stored from `data` on (rows * row_bytes bytes); every decoded value is
// multiplied by `scale` (a scaled fp8 tensor's factor; 1 otherwise).
struct QuantizedSegment {
  const uint8_t* data = nullptr;
  int64_t rows = 0;
  float scale = 1.0f;
};

class QuantizedMatrix {
 public:
  // `cols` must be whole blocks; `owners` keep the segments' bytes alive (and are kept here).
  QuantizedMatrix(QuantizedEncoding encoding, int64_t cols, std::vector<QuantizedSegment> segments,
                  std::vector<std::shared_ptr<const void>> owners, std::string name);

  const QuantizedEncoding& encoding() const { return encoding_; }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t row_bytes() const { return row_bytes_; }
  int64_t stored_bytes() const { return rows_ * row_bytes_; }
  const std::vector<QuantizedSegment>& segments() const { return segments_; }
  const std::vector<std::shared_ptr<const void>>& owners() const { return owners_; }
  const std::string& name() const { return name_; }  // for errors: the file and tensor

  // Rows [begin, end) decoded into `out` ((end - begin) * cols values, row-major).
  void dequantize_rows(int64_t begin, int64_t end, float* out) const;
  // The same rounded to bfloat16 (nearest even).
  void dequantize_rows(int64_t begin, int64_t end, c10::BFloat16* out) const;
  // The same as a new [end - begin, cols] tensor of `dtype` (float32 or bfloat16, rounded to nearest even).
  at::Tensor dequantize_rows(int64_t begin, int64_t end, at::ScalarType dtype) const;
  at::Tensor dequantize(at::ScalarType dtype) const { return dequantize_rows(0, rows_, dtype); }

  // Rows [begin, end) as a matrix over the same bytes.
  QuantizedMatrix row_range(int64_t begin, int64_t end) const;
  // The rows of `parts` one after another, or nullopt when their encodings or widths differ.
  static std::optional<QuantizedMatrix> concatenate(const std::vector<const QuantizedMatrix*>& parts);

  // x [..., cols] @ this^T (+ bias [rows]) -> [..., rows], as flashps::linear would give it for the
  // decoded weight in `compute_dtype` (float32 or bfloat16): `chunk_rows` rows (0: a default) are
  // decoded at a time into scratch and multiplied.
  at::Tensor linear(const at::Tensor& x, const at::Tensor& bias, at::ScalarType compute_dtype,
                    int64_t chunk_rows = 0) const;

  // Throws CorruptDataError naming the matrix when a value decodes to NaN or infinity (a corrupt
  // scale or an fp8 NaN code: never a weight). Decodes every row once.
  void require_finite() const;

 private:
  // The segment holding `row` and the row's index inside it.
  std::pair<const QuantizedSegment*, int64_t> locate(int64_t row) const;

  QuantizedEncoding encoding_;
  int64_t rows_ = 0, cols_ = 0, row_bytes_ = 0;
  std::vector<QuantizedSegment> segments_;
  std::vector<int64_t> segment_starts_;  // first row of each segment
  std::vector<std::shared_ptr<const void>> owners_;
  std::string name_;
};

// Rows decoded per chunk by QuantizedMatrix::linear when `chunk_rows` is 0: 2^26 values (128 MiB
// of bfloat16 scratch per calling thread), so every Flux and T5-XXL matrix (at most 21504 x 3072)
// decodes whole. Each chunk's product re-reads all of x and oneDNN runs narrow products less
// efficiently, so chunking costs more than the memory saves: `flashps-bench bench quant-linear`
// measured x [4096, 3072] @ Q4_K [3072, 3072] at 1488 ms in 64-row chunks, 647 ms in 1024-row
// chunks, 623 ms whole (dense bf16: 616 ms); [820, 3072] @ fp8 [12288, 3072] at 807 ms in 2048-row
// chunks, 664 ms in 5456-row chunks, 392 ms whole (2-core machine shared with other builds).
int64_t default_quantized_chunk_rows(int64_t cols);

}  // namespace flashps
