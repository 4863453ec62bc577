// Linear weights kept as stored (WeightLoadOptions::keep_quantized): loaded from a GGUF file
// through a key layout (rows, swapped halves), they multiply as the same weights decoded at load,
// hold no dense copy, fuse by segments, and follow dtype changes; scaled fp8 safetensors apply
// their scale either way.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <cmath>

#include "core/diagnostics/error.h"
#include "core/files/gguf_file.h"
#include "core/files/safetensors.h"
#include "core/kernels/linear.h"
#include "core/quant/quantized_matrix.h"
#include "core/quant/random_blocks.h"
#include "core/quant/small_floats.h"
#include "models/common/fused_linear.h"
#include "models/common/layers.h"
#include "models/loading/checkpoint_file.h"
#include "models/loading/key_layout.h"
#include "models/loading/weights.h"
#include "support/temp_dir.h"

using namespace flashps;

namespace {

// q, k, v stored as one qkv matrix (Q8_0), a modulation stored with its halves swapped (Q8_0),
// and a plain K-quant layer (Q4_K, one 256-value block per row).
struct QuantizedTestModel {
  std::shared_ptr<PathNode> root = std::make_shared<PathNode>();
  Linear q{64, 32}, k{64, 32}, v{64, 32}, modulation{64, 64}, plain{256, 8};
  QuantizedTestModel() {
    root->register_module("q", q);
    root->register_module("k", k);
    root->register_module("v", v);
    root->register_module("modulation", modulation);
    root->register_module("plain", plain);
  }
};

struct QuantizedTestFile {
  std::string path;
  int64_t quantized_bytes = 0;  // of the Q8_0 / Q4_K tensors
};

QuantizedTestFile write_quantized_test_file(const test::TempDir& temp) {
  GgufWriter writer;
  int64_t quantized_bytes = 0;
  auto add_matrix = [&](const std::string& name, GgmlType type, int64_t rows, int64_t cols, uint64_t seed) {
    const std::vector<uint8_t> bytes = random_quantized_rows(QuantizedEncoding::ggml(type), rows, cols, seed);
    writer.add_tensor(name, type, {cols, rows}, bytes.data(), bytes.size());
    quantized_bytes += int64_t(bytes.size());
  };
  auto add_vector = [&](const std::string& name, int64_t size) {
    const at::Tensor values = at::randn({size});
    writer.add_tensor(name, GgmlType::F32, {size}, values.data_ptr<float>(), size_t(size) * 4);
  };
  add_matrix("qkv.weight", GgmlType::Q8_0, 96, 64, 1);
  add_vector("qkv.bias", 96);
  add_matrix("mod.weight", GgmlType::Q8_0, 64, 64, 2);
  add_vector("mod.bias", 64);
  add_matrix("plain.weight", GgmlType::Q4_K, 8, 256, 3);
  add_vector("plain.bias", 8);
  const std::string path = temp.file("quantized.gguf");
  writer.write(path);
  return {path, quantized_bytes};
}

std::unique_ptr<CheckpointTensors> quantized_test_tensors(const std::string& path) {
  KeyLayout layout;
  const char* names[] = {"q", "k", "v"};
  for (int i = 0; i < 3; ++i)
    for (const char* suffix : {".weight", ".bias"})
      layout[std::string(names[i]) + suffix] = {std::string("qkv") + suffix, KeyPiece::Transform::rows, 32 * i, 32 * (i + 1)};
  for (const char* suffix : {".weight", ".bias"})
    layout[std::string("modulation") + suffix] = {std::string("mod") + suffix, KeyPiece::Transform::swap_halves};
  layout["plain.weight"] = {"plain.weight"};
  layout["plain.bias"] = {"plain.bias"};
  return tensors_in_layout(open_checkpoint_file(path), layout, "test");
}

QuantizedTestModel load_test_model(const std::string& path, bool keep_quantized) {
  QuantizedTestModel model;
  WeightLoadOptions options;
  options.keep_quantized = keep_quantized;
  load_weights_strict(*model.root, *quantized_test_tensors(path), options);
  return model;
}

void require_close(const at::Tensor& actual, const at::Tensor& expected, double relative) {
  REQUIRE(actual.sizes() == expected.sizes());
  const double scale = expected.abs().max().item<double>() + 1e-12;
  const double error = (actual.to(at::kDouble) - expected.to(at::kDouble)).abs().max().item<double>();
  INFO("max abs error " << error << ", largest value " << scale);
  CHECK(error <= relative * scale);
}

}  // namespace

TEST_CASE("Linear weights kept quantized multiply as the decoded weights", "[quant][loading]") {
  at::manual_seed(5);
  test::TempDir temp;
  const QuantizedTestFile file = write_quantized_test_file(temp);
  const QuantizedTestModel dense = load_test_model(file.path, false);
  const QuantizedTestModel kept = load_test_model(file.path, true);

  const std::vector<std::pair<Linear, Linear>> layers = {{dense.q, kept.q},
                                                         {dense.k, kept.k},
                                                         {dense.v, kept.v},
                                                         {dense.modulation, kept.modulation},
                                                         {dense.plain, kept.plain}};
  for (const auto& [decoded, quantized] : layers) {
    REQUIRE(decoded->weight.defined());
    REQUIRE(quantized->quantized_weight());
    CHECK_FALSE(quantized->weight.defined());  // never a stale dense weight
    CHECK(quantized->in_features() == decoded->in_features());
    CHECK(quantized->out_features() == decoded->out_features());
    CHECK(at::equal(quantized->dense_weight(), decoded->weight));  // rows and swapped halves as decoded
    const at::Tensor x = at::randn({5, decoded->in_features()});
    require_close(quantized->forward(x), decoded->forward(x), 1e-5);
    CHECK(at::equal(quantized->weight_columns(32, 32), decoded->weight.narrow(1, 32, 32)));
  }
  // Only dense tensors are parameters: the quantized weights are no parameter a caller could misread.
  for (const auto& item : kept.root->named_parameters()) CHECK(item.key().find("weight") == std::string::npos);

  // q, k and v fuse into one product over their segments.
  const at::Tensor x = at::randn({7, 64});
  const std::vector<at::Tensor> fused = FusedLinear({kept.q, kept.k, kept.v}).forward(x);
  REQUIRE(fused.size() == 3);
  require_close(fused[0], dense.q->forward(x), 1e-5);
  require_close(fused[1], dense.k->forward(x), 1e-5);
  require_close(fused[2], dense.v->forward(x), 1e-5);
  // Different encodings (Q8_0 and Q4_K) cannot fuse: each part runs alone.
  const std::vector<at::Tensor> mixed = FusedLinear({kept.modulation, kept.q}).forward(x);
  require_close(mixed[0], dense.modulation->forward(x), 1e-5);
  require_close(mixed[1], dense.q->forward(x), 1e-5);
}

TEST_CASE("a model loaded keep_quantized holds its quantized weights once, as stored", "[quant][loading]") {
  test::TempDir temp;
  const QuantizedTestFile file = write_quantized_test_file(temp);
  const QuantizedTestModel kept = load_test_model(file.path, true);
  const WeightFootprint footprint = weight_footprint(*kept.root);
  CHECK(footprint.quantized_matrices == 5);
  CHECK(footprint.quantized_bytes == file.quantized_bytes);  // the rows of qkv add up to qkv, once
  CHECK(footprint.dense_bytes == 4 * (footprint.values - footprint.quantized_values));  // biases only
  CHECK(footprint.quantized_values == 96 * 64 + 64 * 64 + 8 * 256);

  const QuantizedTestModel dense = load_test_model(file.path, false);
  const WeightFootprint decoded = weight_footprint(*dense.root);
  CHECK(decoded.quantized_matrices == 0);
  CHECK(decoded.values == footprint.values);
}

TEST_CASE("quantized Linear weights follow dtype changes", "[quant][loading]") {
  at::manual_seed(6);
  test::TempDir temp;
  const QuantizedTestFile file = write_quantized_test_file(temp);
  QuantizedTestModel kept = load_test_model(file.path, true);
  const QuantizedTestModel dense = load_test_model(file.path, false);
  const at::Tensor x = at::randn({4, 64});

  kept.root->to(at::Device(at::kCPU));  // the block-wise product is CPU code: nothing to move
  REQUIRE(kept.q->quantized_weight());
  CHECK_FALSE(kept.q->weight.defined());
  CHECK(kept.q->weight_device() == at::Device(at::kCPU));

  kept.root->to(at::kBFloat16);  // stays quantized; products in bfloat16
  REQUIRE(kept.q->quantized_weight());
  CHECK(kept.q->weight_dtype() == at::kBFloat16);
  CHECK(kept.q->bias.scalar_type() == at::kBFloat16);
  require_close(kept.q->forward(x), linear(x, dense.q->weight.to(at::kBFloat16), dense.q->bias.to(at::kBFloat16)), 2e-2);

  kept.root->to(at::kDouble);  // no block-wise product in double: decoded into `weight`
  CHECK_FALSE(kept.q->quantized_weight());
  REQUIRE(kept.q->weight.defined());
  CHECK(kept.q->weight.scalar_type() == at::kDouble);
  CHECK(at::equal(kept.q->weight, dense.q->weight.to(at::kDouble)));
  CHECK(kept.root->named_parameters().contains("q.weight"));
}

TEST_CASE("scaled fp8 safetensors apply their scale, decoded or kept", "[quant][loading]") {
  test::TempDir temp;
  std::vector<uint8_t> codes(4 * 32);
  for (size_t i = 0; i < codes.size(); ++i) codes[i] = uint8_t(i * 37 % 0x7E);  // no NaN code
  auto write = [&](float scale) {
    SafetensorsWriter writer;
    writer.add("layer.weight", DType::F8_E4M3, {4, 32}, codes.data(), codes.size());
    writer.add("layer.scale_weight", DType::F32, {}, &scale, 4);
    const float input_scale = 1.0f;
    writer.add("layer.scale_input", DType::F32, {}, &input_scale, 4);
    const uint8_t marker = 0;
    writer.add("scaled_fp8", DType::F8_E4M3, {1}, &marker, 1);
    const std::string path = temp.file("scaled_" + std::to_string(scale) + ".safetensors");
    writer.write(path);
    return path;
  };
  at::Tensor expected = at::empty({4, 32});
  for (size_t i = 0; i < codes.size(); ++i) expected.data_ptr<float>()[i] = float8_e4m3fn_to_float(codes[i]) * 0.25f;

  const auto tensors = open_checkpoint_file(write(0.25f));
  CHECK(tensors->entries().size() == 1);  // the scales and the marker are not weights
  REQUIRE(tensors->entries().count("layer.weight"));
  CHECK(tensors->entries().at("layer.weight").quantized);
  CHECK(at::equal(tensors->read("layer.weight"), expected));
  const auto matrix = tensors->read_quantized("layer.weight");
  REQUIRE(matrix);
  CHECK(at::equal(matrix->dequantize(at::kFloat), expected));

  const auto broken = open_checkpoint_file(write(std::nanf("")));
  CHECK_THROWS_WITH(broken->read("layer.weight"),
                    Catch::Contains("layer.scale_weight") && Catch::Contains("not a finite number"));
}
