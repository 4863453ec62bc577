// The encoders of ggml_quantize.h and small_floats.h: decode(encode(x)) within each format's
// rounding bound on random data; the legacy formats and F16 reproduce the gguf_flux_fill_tiny
// fixture's bytes (written by gguf-py) from the unquantized weights; float8 e4m3fn and bfloat16
// reproduce single_file_flux_fill_tiny's fp8 file (written by PyTorch).
#include <c10/util/Half.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <vector>

#include "core/diagnostics/error.h"
#include "core/files/gguf_file.h"
#include "core/files/safetensors.h"
#include "core/quant/ggml_quantize.h"
#include "core/quant/small_floats.h"
#include "support/fixtures.h"

using flashps::GgmlType;

namespace {

// Blocks of 256 Gaussian values at scales from 1e-4 to 10, plus the awkward blocks: all zero,
// constant, all positive, one outlier.
std::vector<float> quantize_test_values() {
  std::mt19937 random(44);
  std::normal_distribution<float> normal;
  std::vector<float> values;
  for (float scale : {1e-4f, 0.02f, 1.0f, 10.0f})
    for (int i = 0; i < 4 * 256; ++i) values.push_back(scale * normal(random));
  values.insert(values.end(), 256, 0.0f);
  values.insert(values.end(), 256, 0.75f);
  for (int i = 0; i < 256; ++i) values.push_back(0.5f + std::fabs(normal(random)));
  for (int i = 0; i < 256; ++i) values.push_back(i == 77 ? -30.0f : 0.1f * normal(random));
  return values;
}

std::vector<float> round_trip(GgmlType type, const std::vector<float>& values) {
  std::vector<uint8_t> bytes(flashps::ggml_encoded_size(type, int64_t(values.size())));
  flashps::ggml_quantize(type, values.data(), int64_t(values.size()), bytes.data());
  std::vector<float> decoded(values.size());
  flashps::ggml_dequantize(type, bytes.data(), int64_t(values.size()), decoded.data());
  return decoded;
}

struct Range {
  float min, max, absmax;
};
Range range_of(const float* x, int n) {
  Range r{x[0], x[0], 0.0f};
  for (int i = 0; i < n; ++i) {
    r.min = std::min(r.min, x[i]);
    r.max = std::max(r.max, x[i]);
    r.absmax = std::max(r.absmax, std::fabs(x[i]));
  }
  return r;
}

// How far a scale `value` stored in F16 may be from the one computed: twice F16's relative
// rounding, or its subnormal step for the tiny scales of tiny weights.
float f16_slack(float value) { return std::max(std::fabs(value) * std::ldexp(1.0f, -10), std::ldexp(1.0f, -24)); }

// The largest error each format allows for the values of one block (`x`, block_size values), from
// its definition: half a step of the block's scale, the scales themselves stored in F16 (times the
// largest level they multiply), a value at the far end of a symmetric format's range one step off
// (it clips), a K-quant's 6-bit scale one step above the sub-block's own.
std::vector<float> error_bounds(GgmlType type, const float* x) {
  switch (type) {
    case GgmlType::Q8_0: {
      const float d = range_of(x, 32).absmax / 127;
      return std::vector<float>(32, 0.5f * d + 127 * f16_slack(d));
    }
    case GgmlType::Q4_0: case GgmlType::Q5_0: {
      const float half_levels = type == GgmlType::Q4_0 ? 8.0f : 16.0f;
      const float d = range_of(x, 32).absmax / half_levels;
      return std::vector<float>(32, d + half_levels * f16_slack(d));
    }
    case GgmlType::Q4_1: case GgmlType::Q5_1: {
      const float steps = type == GgmlType::Q4_1 ? 15.0f : 31.0f;
      const Range r = range_of(x, 32);
      const float d = (r.max - r.min) / steps;
      return std::vector<float>(32, 0.5f * d + steps * f16_slack(d) + f16_slack(r.min));
    }
    case GgmlType::Q4_K: case GgmlType::Q5_K: {
      const float top = type == GgmlType::Q4_K ? 15.0f : 31.0f;
      float max_min = 0.0f, max_reach = 0.0f;
      for (int s = 0; s < 8; ++s) max_min = std::max(max_min, -std::min(0.0f, range_of(x + 32 * s, 32).min));
      const float dmin = max_min / 63 + f16_slack(max_min / 63);
      auto reach_of = [&](int s) {
        const Range r = range_of(x + 32 * s, 32);
        return std::max(r.max, 0.0f) - std::min(0.0f, r.min) + dmin;
      };
      for (int s = 0; s < 8; ++s) max_reach = std::max(max_reach, reach_of(s));
      const float d = max_reach / top / 63 + f16_slack(max_reach / top / 63);
      std::vector<float> bounds;
      for (int s = 0; s < 8; ++s) bounds.insert(bounds.end(), 32, 0.5f * (reach_of(s) / top + d) * 1.001f + 1e-7f * max_reach);
      return bounds;
    }
    case GgmlType::Q6_K: {
      float max_amax = 0.0f;
      for (int s = 0; s < 16; ++s) max_amax = std::max(max_amax, range_of(x + 16 * s, 16).absmax);
      const float d = max_amax / 31 / 127 + f16_slack(max_amax / 31 / 127);
      std::vector<float> bounds;
      for (int s = 0; s < 16; ++s)
        bounds.insert(bounds.end(), 16, 0.5f * (range_of(x + 16 * s, 16).absmax / 31 + d) * 1.001f + 1e-7f * max_amax);
      return bounds;
    }
    default: break;
  }
  std::vector<float> bounds;  // F16 (subnormal below 2^-14) and BF16: half a unit in the last place
  for (int i = 0; i < 32; ++i)
    bounds.push_back(type == GgmlType::BF16 ? std::fabs(x[i]) * std::ldexp(1.0f, -8)
                                            : std::max(std::fabs(x[i]) * std::ldexp(1.0f, -11), std::ldexp(1.0f, -25)));
  return bounds;
}

const GgmlType kEncodable[] = {GgmlType::F16,  GgmlType::BF16, GgmlType::Q8_0, GgmlType::Q4_0,
                               GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q4_K,
                               GgmlType::Q5_K, GgmlType::Q6_K};

std::vector<float> float32_values(const flashps::SafetensorsFile& file, const flashps::TensorInfo& info) {
  REQUIRE(info.dtype == flashps::DType::F32);
  std::vector<float> values(size_t(info.element_count()));
  std::memcpy(values.data(), file.data(info), info.byte_size());
  return values;
}

}  // namespace

TEST_CASE("ggml encoders round-trip within each format's rounding bound", "[quant][ggml_quantize]") {
  const std::vector<float> values = quantize_test_values();
  for (GgmlType type : kEncodable) {
    const int64_t block = flashps::ggml_type_traits(uint32_t(type))->block_size;
    const int64_t bound_block = block == 1 ? 32 : block;
    const std::vector<float> decoded = round_trip(type, values);
    double squared_error = 0, squared_bound = 0;
    int64_t over = 0;
    float worst_ratio = 0;
    for (size_t b = 0; b < values.size(); b += size_t(bound_block)) {
      const std::vector<float> bounds = error_bounds(type, values.data() + b);
      for (int64_t i = 0; i < bound_block; ++i) {
        const float error = std::fabs(decoded[b + i] - values[b + i]);
        if (error > bounds[i]) ++over;
        if (bounds[i] > 0) worst_ratio = std::max(worst_ratio, error / bounds[i]);
        squared_error += double(error) * error;
        squared_bound += double(bounds[i]) * bounds[i];
      }
    }
    INFO(flashps::ggml_type_name(uint32_t(type)) << ": worst error / bound " << worst_ratio);
    CHECK(over == 0);
    // Rounding to nearest: the typical error is well inside the bound (a coder that always
    // rounds down, or picks a scale twice too coarse, fails here).
    CHECK(std::sqrt(squared_error / squared_bound) < 0.7);
  }
}

TEST_CASE("ggml encoders refuse partial blocks and types they cannot encode", "[quant][ggml_quantize]") {
  std::vector<float> values(40, 1.0f);
  std::vector<uint8_t> bytes(1024);
  CHECK_THROWS_WITH(flashps::ggml_quantize(GgmlType::Q8_0, values.data(), 40, bytes.data()),
                    Catch::Contains("40 values are not whole blocks of Q8_0"));
  CHECK_THROWS_WITH(flashps::ggml_quantize(GgmlType::Q2_K, values.data(), 0, bytes.data()),
                    Catch::Contains("cannot encode Q2_K"));
  CHECK(flashps::ggml_encoded_size(GgmlType::Q4_K, 512) == 288);
}

TEST_CASE("float encoders round to nearest even as PyTorch converts", "[quant][ggml_quantize]") {
  // Half: against c10::Half's conversion on random bit patterns and every half's neighbourhood.
  std::mt19937 random(7);
  for (int i = 0; i < 200000; ++i) {
    const uint32_t bits = random();
    const float value = flashps::float_from_bits(bits);
    if (std::isnan(value)) continue;
    INFO("float bits " << bits);
    REQUIRE(flashps::float_to_half(value) == c10::Half(value).x);
  }
  for (uint32_t half = 0; half < 0x7C00; ++half) {
    const float exact = flashps::half_to_float(uint16_t(half));
    for (float value : {exact, std::nextafter(exact, 0.0f), std::nextafter(exact, 1e6f),
                        exact + std::ldexp(1.0f, -25)}) {
      INFO("half " << half << " neighbour " << value);
      REQUIRE(flashps::float_to_half(value) == c10::Half(value).x);
    }
  }
  // bfloat16: ties to even on the dropped half.
  CHECK(flashps::float_to_bf16_bits(flashps::float_from_bits(0x3F808000u)) == 0x3F80);
  CHECK(flashps::float_to_bf16_bits(flashps::float_from_bits(0x3F818000u)) == 0x3F82);
  CHECK(flashps::float_to_bf16_bits(flashps::float_from_bits(0x3F808001u)) == 0x3F81);

  // float8: every value encodes to itself; every midpoint to its even neighbour; beyond the range
  // e4m3fn gives NaN (PyTorch does not saturate), e5m2 infinity.
  struct Format {
    uint8_t (*encode)(float);
    float (*decode)(uint8_t);
    uint8_t largest;
  };
  for (const Format& format : {Format{flashps::float_to_float8_e4m3fn, flashps::float8_e4m3fn_to_float, 0x7E},
                               Format{flashps::float_to_float8_e5m2, flashps::float8_e5m2_to_float, 0x7B}}) {
    for (int byte = 0; byte <= format.largest; ++byte) {
      for (uint8_t sign : {uint8_t(0), uint8_t(0x80)}) {
        const uint8_t code = uint8_t(byte | sign);
        const float value = format.decode(code);
        INFO("byte " << int(code));
        REQUIRE(format.encode(value) == code);
        if (byte == format.largest) continue;
        const float next = format.decode(uint8_t(code + 1));
        const float middle = (value + next) / 2;
        REQUIRE(format.encode(middle) == ((code & 1) ? uint8_t(code + 1) : code));
        REQUIRE(format.encode(std::nextafter(middle, 0.0f)) == code);
        REQUIRE(format.encode(std::nextafter(middle, 1e9f * (sign ? -1 : 1))) == uint8_t(code + 1));
      }
    }
  }
  CHECK(flashps::float_to_float8_e4m3fn(460.0f) == 0x7E);
  CHECK(flashps::float_to_float8_e4m3fn(470.0f) == 0x7F);  // NaN, as PyTorch
  CHECK(flashps::float_to_float8_e4m3fn(-1e30f) == 0xFF);
  CHECK(flashps::float_to_float8_e5m2(1e30f) == 0x7C);
  CHECK(flashps::float_to_float8_e5m2(-60000.0f) == 0xFB);
  CHECK(std::isnan(flashps::float8_e5m2_to_float(flashps::float_to_float8_e5m2(NAN))));
}

TEST_CASE("ggml encoders reproduce gguf-py's bytes of the GGUF fixture", "[quant][ggml_quantize][fixtures]") {
  FLASHPS_REQUIRE_FIXTURE(gguf_dir, "gguf_flux_fill_tiny");
  FLASHPS_REQUIRE_FIXTURE(bfl_dir, "single_file_flux_fill_tiny");
  // The unquantized weights in BFL keys (flux_fill_tiny's, bitwise: that fixture's README).
  const auto weights = flashps::SafetensorsFile::open((bfl_dir / "flux_fill_tiny_bfl.safetensors").string());
  std::map<std::string, int> checked;
  for (const auto& entry : std::filesystem::directory_iterator(gguf_dir)) {
    if (entry.path().extension() != ".gguf") continue;
    const auto file = flashps::GgufFile::open(entry.path().string());
    for (const flashps::GgufTensor& tensor : file->tensors()) {
      const flashps::TensorInfo* info = weights->find(tensor.name);
      REQUIRE(info != nullptr);
      const std::vector<float> values = float32_values(*weights, *info);
      std::vector<uint8_t> bytes(flashps::ggml_encoded_size(tensor.type, int64_t(values.size())));
      flashps::ggml_quantize(tensor.type, values.data(), int64_t(values.size()), bytes.data());
      INFO(entry.path().filename().string() << ": " << tensor.name << " as " << flashps::ggml_type_name(uint32_t(tensor.type)));
      REQUIRE(bytes.size() == tensor.byte_size);
      CHECK(std::memcmp(bytes.data(), file->data(tensor), bytes.size()) == 0);
      ++checked[flashps::ggml_type_name(uint32_t(tensor.type))];
    }
  }
  REQUIRE(!checked.empty());
  for (const auto& [type, count] : checked) INFO(type << ": " << count << " tensors bit for bit");
}

TEST_CASE("float8 e4m3fn and bfloat16 encoders reproduce the fp8 fixture file", "[quant][ggml_quantize][fixtures]") {
  FLASHPS_REQUIRE_FIXTURE(dir, "single_file_flux_fill_tiny");
  const auto weights = flashps::SafetensorsFile::open((dir / "flux_fill_tiny_bfl.safetensors").string());
  const auto fp8 = flashps::SafetensorsFile::open((dir / "flux_fill_tiny_bfl_fp8_e4m3fn.safetensors").string());
  int fp8_tensors = 0, bf16_tensors = 0;
  for (const flashps::TensorInfo& stored : fp8->tensors()) {
    const flashps::TensorInfo* info = weights->find(stored.name);
    REQUIRE(info != nullptr);
    const std::vector<float> values = float32_values(*weights, *info);
    std::vector<uint8_t> bytes;
    for (float value : values) {
      if (stored.dtype == flashps::DType::F8_E4M3) {
        bytes.push_back(flashps::float_to_float8_e4m3fn(value));
      } else {
        REQUIRE(stored.dtype == flashps::DType::BF16);
        const uint16_t bits = flashps::float_to_bf16_bits(value);
        bytes.push_back(uint8_t(bits & 0xFF));
        bytes.push_back(uint8_t(bits >> 8));
      }
    }
    INFO(stored.name);
    REQUIRE(bytes.size() == stored.byte_size());
    CHECK(std::memcmp(bytes.data(), fp8->data(stored), bytes.size()) == 0);
    (stored.dtype == flashps::DType::F8_E4M3 ? fp8_tensors : bf16_tensors)++;
  }
  CHECK(fp8_tensors > 0);
  CHECK(bf16_tensors > 0);
}
