#include "core/quant/quantized_matrix.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/util/BFloat16.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "core/diagnostics/error.h"
#include "core/kernels/autograd_mode.h"
#include "core/kernels/dnnl_matmul.h"
#include "core/kernels/linear.h"
#include "core/quant/small_floats.h"

namespace flashps {
namespace {

// Decoding tables of the two float8 formats: 256 codes each, built once.
const std::array<float, 256>& float8_table(QuantizedEncoding::Kind kind) {
  static const auto build = [](float (*decode)(uint8_t)) {
    std::array<float, 256> table{};
    for (int code = 0; code < 256; ++code) table[code] = decode(uint8_t(code));
    return table;
  };
  static const std::array<float, 256> e4m3fn = build(float8_e4m3fn_to_float);
  static const std::array<float, 256> e5m2 = build(float8_e5m2_to_float);
  return kind == QuantizedEncoding::Kind::float8_e5m2 ? e5m2 : e4m3fn;
}

// float32 -> bfloat16 bits, rounded to nearest even, in plain integer arithmetic the compiler
// vectorises (c10::BFloat16's constructor checks for NaN per value: it was most of a masked
// edit's decoding time). Values are finite here: require_finite checked them at load, and a NaN
// stays a NaN or becomes an infinity, never a finite number.
inline uint16_t bf16_bits_rounded(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return uint16_t((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

// One stored row of `cols` values into `out`.
void decode_quantized_row(const QuantizedEncoding& encoding, const uint8_t* row, int64_t cols, float scale,
                          float* out) {
  if (encoding.kind == QuantizedEncoding::Kind::ggml) {
    ggml_dequantize(encoding.ggml_type, row, cols, out);
    if (scale != 1.0f)
      for (int64_t i = 0; i < cols; ++i) out[i] *= scale;
    return;
  }
  const std::array<float, 256>& table = float8_table(encoding.kind);
  for (int64_t i = 0; i < cols; ++i) out[i] = table[row[i]] * scale;
}

}  // namespace

int64_t QuantizedEncoding::block_values() const {
  if (kind != Kind::ggml) return 1;
  const GgmlTypeTraits* traits = ggml_type_traits(uint32_t(ggml_type));
  return traits ? traits->block_size : 0;
}

int64_t QuantizedEncoding::block_bytes() const {
  if (kind != Kind::ggml) return 1;
  const GgmlTypeTraits* traits = ggml_type_traits(uint32_t(ggml_type));
  return traits ? traits->type_size : 0;
}

std::string QuantizedEncoding::name() const {
  switch (kind) {
    case Kind::float8_e4m3fn: return "F8_E4M3";
    case Kind::float8_e5m2: return "F8_E5M2";
    case Kind::ggml: break;
  }
  return ggml_type_name(uint32_t(ggml_type));
}

int64_t default_quantized_chunk_rows(int64_t cols) {
  constexpr int64_t kScratchValues = int64_t(1) << 26;  // 128 MiB of bfloat16
  return std::max<int64_t>(16, kScratchValues / std::max<int64_t>(cols, 1) / 16 * 16);
}

QuantizedMatrix::QuantizedMatrix(QuantizedEncoding encoding, int64_t cols, std::vector<QuantizedSegment> segments,
                                 std::vector<std::shared_ptr<const void>> owners, std::string name)
    : encoding_(encoding), cols_(cols), segments_(std::move(segments)), owners_(std::move(owners)),
      name_(std::move(name)) {
  const int64_t block_values = encoding_.block_values();
  if (block_values <= 0 || cols_ <= 0 || cols_ % block_values != 0)
    throw InvalidArgumentError(name_ + ": rows of " + std::to_string(cols_) + " values are not whole " +
                               encoding_.name() + " blocks");
  row_bytes_ = cols_ / block_values * encoding_.block_bytes();
  for (const QuantizedSegment& segment : segments_) {
    if (!segment.data || segment.rows <= 0 || !std::isfinite(segment.scale))
      throw InvalidArgumentError(name_ + ": a segment without data, rows or a finite scale");
    segment_starts_.push_back(rows_);
    rows_ += segment.rows;
  }
}

std::pair<const QuantizedSegment*, int64_t> QuantizedMatrix::locate(int64_t row) const {
  const auto after = std::upper_bound(segment_starts_.begin(), segment_starts_.end(), row);
  const size_t index = size_t(after - segment_starts_.begin()) - 1;
  return {&segments_[index], row - segment_starts_[index]};
}

void QuantizedMatrix::dequantize_rows(int64_t begin, int64_t end, float* out) const {
  if (begin < 0 || end > rows_ || begin > end)
    throw InvalidArgumentError(name_ + ": rows [" + std::to_string(begin) + ", " + std::to_string(end) +
                               ") outside its " + std::to_string(rows_));
  at::parallel_for(begin, end, 8, [&](int64_t first, int64_t last) {
    for (int64_t row = first; row < last; ++row) {
      const auto [segment, inside] = locate(row);
      decode_quantized_row(encoding_, segment->data + inside * row_bytes_, cols_, segment->scale,
                           out + (row - begin) * cols_);
    }
  });
}

at::Tensor QuantizedMatrix::dequantize_rows(int64_t begin, int64_t end, at::ScalarType dtype) const {
  if (dtype == at::kFloat) {
    at::Tensor values = at::empty({end - begin, cols_}, at::TensorOptions().dtype(at::kFloat));
    dequantize_rows(begin, end, values.data_ptr<float>());
    return values;
  }
  if (dtype != at::kBFloat16)
    throw InvalidArgumentError(name_ + ": quantized weights decode to float32 or bfloat16, not " +
                               std::string(c10::toString(dtype)));
  at::Tensor values = at::empty({end - begin, cols_}, at::TensorOptions().dtype(at::kBFloat16));
  dequantize_rows(begin, end, values.data_ptr<c10::BFloat16>());
  return values;
}

void QuantizedMatrix::dequantize_rows(int64_t begin, int64_t end, c10::BFloat16* out) const {
  if (begin < 0 || end > rows_ || begin > end)
    throw InvalidArgumentError(name_ + ": rows [" + std::to_string(begin) + ", " + std::to_string(end) +
                               ") outside its " + std::to_string(rows_));
  at::parallel_for(begin, end, 8, [&](int64_t first, int64_t last) {
    std::vector<float> row_values(static_cast<size_t>(cols_));  // one row in float32, then rounded
    for (int64_t row = first; row < last; ++row) {
      const auto [segment, inside] = locate(row);
      decode_quantized_row(encoding_, segment->data + inside * row_bytes_, cols_, segment->scale, row_values.data());
      c10::BFloat16* target = out + (row - begin) * cols_;
      for (int64_t i = 0; i < cols_; ++i) target[i].x = bf16_bits_rounded(row_values[size_t(i)]);
    }
  });
}

QuantizedMatrix QuantizedMatrix::row_range(int64_t begin, int64_t end) const {
  if (begin < 0 || end > rows_ || begin >= end)
    throw InvalidArgumentError(name_ + ": rows [" + std::to_string(begin) + ", " + std::to_string(end) +
                               ") outside its " + std::to_string(rows_));
  std::vector<QuantizedSegment> pieces;
  for (size_t i = 0; i < segments_.size(); ++i) {
    const int64_t start = segment_starts_[i], stop = start + segments_[i].rows;
    const int64_t from = std::max(start, begin), to = std::min(stop, end);
    if (from >= to) continue;
    pieces.push_back({segments_[i].data + (from - start) * row_bytes_, to - from, segments_[i].scale});
  }
  return QuantizedMatrix(encoding_, cols_, std::move(pieces), owners_,
                         name_ + " rows [" + std::to_string(begin) + ", " + std::to_string(end) + ")");
}

std::optional<QuantizedMatrix> QuantizedMatrix::concatenate(const std::vector<const QuantizedMatrix*>& parts) {
  if (parts.empty()) return std::nullopt;
  std::vector<QuantizedSegment> segments;
  std::vector<std::shared_ptr<const void>> owners;
  std::string name;
  for (const QuantizedMatrix* part : parts) {
    if (part->encoding_ != parts[0]->encoding_ || part->cols_ != parts[0]->cols_) return std::nullopt;
    for (const QuantizedSegment& segment : part->segments_) {
      // Rows that follow each other in memory (q, k, v of one stored qkv) stay one segment.
      QuantizedSegment* last = segments.empty() ? nullptr : &segments.back();
      if (last && last->scale == segment.scale && last->data + last->rows * part->row_bytes_ == segment.data)
        last->rows += segment.rows;
      else
        segments.push_back(segment);
    }
    for (const auto& owner : part->owners_)
      if (std::find(owners.begin(), owners.end(), owner) == owners.end()) owners.push_back(owner);
    name += (name.empty() ? "" : " + ") + part->name_;
  }
  return QuantizedMatrix(parts[0]->encoding_, parts[0]->cols_, std::move(segments), std::move(owners), name);
}

at::Tensor QuantizedMatrix::linear(const at::Tensor& x, const at::Tensor& bias, at::ScalarType compute_dtype,
                                   int64_t chunk_rows) const {
  if (x.size(-1) != cols_)
    throw InvalidArgumentError(name_ + ": input rows have " + std::to_string(x.size(-1)) + " values, the weight " +
                               std::to_string(cols_));
  if (!x.device().is_cpu())
    throw InvalidArgumentError(name_ + ": quantized weights multiply on the CPU (load for " + x.device().str() +
                               " decodes them)");
  const at::Tensor inputs = x.reshape({-1, cols_}).contiguous();
  if (chunk_rows <= 0) chunk_rows = default_quantized_chunk_rows(cols_);
  auto shape = x.sizes().vec();
  shape.back() = rows_;
  if (compute_dtype == at::kBFloat16 && x.scalar_type() == at::kFloat && !needs_autograd(x, bias) &&
      inputs.size(0) > 0 && rows_ > 0) {
    // x is rounded to bfloat16 once (flashps::linear would round it again for every chunk) and
    // each chunk's product is written straight into its columns of the float32 result.
    const at::Tensor rounded = inputs.to(at::kBFloat16);
    const int64_t m = inputs.size(0);
    at::Tensor result = at::empty({m, rows_}, inputs.options());
    if (bias.defined()) result.copy_(bias.to(at::kFloat).expand({m, rows_}));
    // The decoded chunk goes to this thread's scratch, reused from product to product (a fresh
    // buffer of tens of MB would be page-faulted in again every time).
    thread_local std::vector<c10::BFloat16> scratch;
    scratch.resize(size_t(std::min(chunk_rows, rows_) * cols_));
    bool native = true;
    for (int64_t begin = 0; begin < rows_ && native; begin += chunk_rows) {
      const int64_t count = std::min(chunk_rows, rows_ - begin);
      dequantize_rows(begin, begin + count, scratch.data());
      // b = weight^T: element (l, j) at weight[j * cols + l].
      native = dnnl_bf16_gemm(m, cols_, count, rounded.data_ptr(), cols_, scratch.data(), 1, cols_,
                              result.data_ptr<float>() + begin, rows_, /*accumulate=*/bias.defined());
    }
    if (native) return result.view(shape);
    // No native bfloat16 kernel (nothing was written past the first chunk's failure): as below.
  }
  at::Tensor result;
  for (int64_t begin = 0; begin < rows_; begin += chunk_rows) {
    const int64_t count = std::min(chunk_rows, rows_ - begin);
    const at::Tensor weight = dequantize_rows(begin, begin + count, compute_dtype);
    const at::Tensor part = flashps::linear(inputs, weight, bias.defined() ? bias.narrow(0, begin, count) : bias);
    if (count == rows_) {
      result = part;
      break;
    }
    if (!result.defined()) result = at::empty({inputs.size(0), rows_}, part.options());
    result.narrow(1, begin, count).copy_(part);
  }
  if (!result.defined()) result = at::empty({inputs.size(0), 0}, x.options());  // a matrix of no rows
  return result.view(shape);
}

void QuantizedMatrix::require_finite() const {
  // A small buffer, reused: a model-sized one per matrix would leave its touched pages resident in
  // a heap that keeps freed memory (core/runtime: keep_freed_memory), gigabytes over a model.
  const int64_t chunk = std::max<int64_t>(1, (int64_t(1) << 18) / cols_);
  std::vector<float> values;
  for (int64_t begin = 0; begin < rows_; begin += chunk) {
    const int64_t count = std::min(chunk, rows_ - begin);
    values.resize(size_t(count * cols_));
    dequantize_rows(begin, begin + count, values.data());
    for (size_t i = 0; i < values.size(); ++i) {
      if (!std::isfinite(values[i])) {
        const int64_t row = begin + int64_t(i) / cols_;
        throw CorruptDataError(name_ + " (" + encoding_.name() + "): row " + std::to_string(row) +
                               " decodes to Inf/NaN; the weights are damaged (a corrupt scale or a NaN code)");
      }
    }
  }
}

}  // namespace flashps
