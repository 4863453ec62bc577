// Quantized matrices kept as stored: decoding a row range, and the chunked product x @ W^T + b,
// against the whole matrix decoded by ggml_dequantize / the float8 decoders and multiplied densely.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <memory>

#include "core/diagnostics/error.h"
#include "core/kernels/linear.h"
#include "core/quant/quantized_matrix.h"
#include "core/quant/random_blocks.h"
#include "core/quant/small_floats.h"

using namespace flashps;

namespace {

// The dense float32 matrix `bytes` stores (rows of `cols` values), decoded with the reference decoders.
at::Tensor reference_decode(const QuantizedEncoding& encoding, const std::vector<uint8_t>& bytes, int64_t rows,
                            int64_t cols, float scale) {
  at::Tensor dense = at::empty({rows, cols});
  float* out = dense.data_ptr<float>();
  if (encoding.kind == QuantizedEncoding::Kind::ggml) {
    ggml_dequantize(encoding.ggml_type, bytes.data(), rows * cols, out);
  } else {
    for (int64_t i = 0; i < rows * cols; ++i)
      out[i] = encoding.kind == QuantizedEncoding::Kind::float8_e4m3fn ? float8_e4m3fn_to_float(bytes[size_t(i)])
                                                                       : float8_e5m2_to_float(bytes[size_t(i)]);
  }
  return dense * scale;
}

std::vector<QuantizedEncoding> all_encodings() {
  std::vector<QuantizedEncoding> encodings;
  for (GgmlType type : {GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1,
                        GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K})
    encodings.push_back(QuantizedEncoding::ggml(type));
  encodings.push_back(QuantizedEncoding::float8_e4m3fn());
  encodings.push_back(QuantizedEncoding::float8_e5m2());
  return encodings;
}

void require_close(const at::Tensor& actual, const at::Tensor& expected, double relative) {
  REQUIRE(actual.sizes() == expected.sizes());
  const double scale = expected.abs().max().item<double>() + 1e-12;
  const double error = (actual.to(at::kDouble) - expected.to(at::kDouble)).abs().max().item<double>();
  INFO("max abs error " << error << ", largest value " << scale);
  CHECK(error <= relative * scale);
}

}  // namespace

TEST_CASE("a quantized matrix decodes and multiplies as its dense decoding", "[quant]") {
  at::manual_seed(3);
  for (const QuantizedEncoding& encoding : all_encodings()) {
    INFO(encoding.name());
    const int64_t cols = 2 * std::max<int64_t>(encoding.block_values(), 32);  // two 256-blocks for K-quants
    const int64_t rows = 37;                                                  // odd: chunks end mid-way
    const float scale = encoding.kind == QuantizedEncoding::Kind::ggml ? 1.0f : 0.0125f;
    // Three segments from three separate buffers (as q, k, v of three stored tensors).
    const std::vector<int64_t> segment_rows = {11, 1, 25};
    std::vector<QuantizedSegment> segments;
    std::vector<at::Tensor> dense_parts;
    auto owner = std::make_shared<std::vector<std::vector<uint8_t>>>();
    for (size_t i = 0; i < segment_rows.size(); ++i)
      owner->push_back(random_quantized_rows(encoding, segment_rows[i], cols, 100 + i));
    for (size_t i = 0; i < segment_rows.size(); ++i) {
      segments.push_back({(*owner)[i].data(), segment_rows[i], scale});
      dense_parts.push_back(reference_decode(encoding, (*owner)[i], segment_rows[i], cols, scale));
    }
    const at::Tensor dense = at::cat(dense_parts, 0);
    REQUIRE(at::isfinite(dense).all().item<bool>());
    const QuantizedMatrix matrix(encoding, cols, segments, {owner}, "test matrix");
    REQUIRE(matrix.rows() == rows);
    REQUIRE(matrix.stored_bytes() == rows * cols / encoding.block_values() * encoding.block_bytes());

    // Decoding: exact in float32, rounded to nearest even in bfloat16, any row range.
    CHECK(at::equal(matrix.dequantize(at::kFloat), dense));
    CHECK(at::equal(matrix.dequantize(at::kBFloat16), dense.to(at::kBFloat16)));
    CHECK(at::equal(matrix.dequantize_rows(9, 13, at::kFloat), dense.narrow(0, 9, 4)));
    CHECK(at::equal(matrix.row_range(5, 30).dequantize(at::kFloat), dense.narrow(0, 5, 25)));
    CHECK_NOTHROW(matrix.require_finite());

    // Products: float32 against the dense product; several chunk sizes, 2-D and 3-D inputs.
    const at::Tensor x = at::randn({2, 3, cols});
    const at::Tensor bias = at::randn({rows});
    const at::Tensor expected = at::linear(x, dense, bias);
    for (int64_t chunk : {0, 1, 7, 16, 64}) {
      INFO("chunk rows " << chunk);
      require_close(matrix.linear(x, bias, at::kFloat, chunk), expected, 1e-5);
      require_close(matrix.linear(x.reshape({6, cols}), at::Tensor(), at::kFloat, chunk),
                    at::linear(x.reshape({6, cols}), dense), 1e-5);
    }
    // bfloat16 products as flashps::linear runs them for a bfloat16 weight.
    // (x rounded once and each chunk written into its columns: chunk sizes that do not divide the rows)
    require_close(matrix.linear(x, bias, at::kBFloat16, 7), linear(x, dense.to(at::kBFloat16), bias), 1e-3);
    require_close(matrix.linear(x, at::Tensor(), at::kBFloat16, 16), linear(x, dense.to(at::kBFloat16), at::Tensor()),
                  1e-3);
    require_close(matrix.linear(x, bias, at::kBFloat16), linear(x, dense.to(at::kBFloat16), bias), 1e-3);

    // Concatenation keeps the rows in order; rows adjacent in memory merge into one segment.
    const QuantizedMatrix first = matrix.row_range(0, 20), second = matrix.row_range(20, 37);
    const auto joined = QuantizedMatrix::concatenate({&first, &second});
    REQUIRE(joined);
    CHECK(joined->segments().size() == matrix.segments().size());
    CHECK(at::equal(joined->dequantize(at::kFloat), dense));
  }
}

TEST_CASE("quantized matrices of different encodings or widths do not concatenate", "[quant]") {
  const auto q8 = QuantizedEncoding::ggml(GgmlType::Q8_0), q4 = QuantizedEncoding::ggml(GgmlType::Q4_0);
  auto bytes = std::make_shared<std::vector<uint8_t>>(random_quantized_rows(q8, 4, 64, 1));
  const QuantizedMatrix a(q8, 64, {{bytes->data(), 4}}, {bytes}, "a");
  const QuantizedMatrix b(q4, 64, {{bytes->data(), 4}}, {bytes}, "b");
  const QuantizedMatrix c(q8, 32, {{bytes->data(), 4}}, {bytes}, "c");
  CHECK_FALSE(QuantizedMatrix::concatenate({&a, &b}));
  CHECK_FALSE(QuantizedMatrix::concatenate({&a, &c}));
  CHECK(QuantizedMatrix::concatenate({&a, &a}));
}

TEST_CASE("quantized matrices refuse bad shapes and corrupt scales", "[quant]") {
  const auto q8 = QuantizedEncoding::ggml(GgmlType::Q8_0);
  auto bytes = std::make_shared<std::vector<uint8_t>>(random_quantized_rows(q8, 2, 64, 2));
  CHECK_THROWS_WITH(QuantizedMatrix(q8, 48, {{bytes->data(), 2}}, {bytes}, "w.weight"),
                    Catch::Contains("w.weight") && Catch::Contains("whole Q8_0 blocks"));
  const QuantizedMatrix matrix(q8, 64, {{bytes->data(), 2}}, {bytes}, "w.weight");
  CHECK_THROWS_WITH(matrix.linear(at::ones({1, 32}), at::Tensor(), at::kFloat), Catch::Contains("w.weight"));
  (*bytes)[68] = 0x00;  // second row's first block (rows are 2 x 34 bytes): d = +infinity
  (*bytes)[69] = 0x7C;
  CHECK_THROWS_WITH(matrix.require_finite(), Catch::Contains("w.weight") && Catch::Contains("row 1"));
}
