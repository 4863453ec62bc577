// GGUF's block formats and the small float formats: exact decoding, compared bit for bit with
// gguf-py's reference dequantizer (K-quants: tests/core/data, made by
// tools/reference/ggml_kquant_reference.py) and with hand-computed blocks.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/diagnostics/error.h"
#include "core/quant/ggml_blocks.h"
#include "core/quant/small_floats.h"
#include "support/source_dir.h"

using flashps::GgmlType;

namespace {

uint32_t bits_of(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}

std::vector<uint8_t> from_hex(const std::string& hex) {
  std::vector<uint8_t> bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) bytes.push_back(uint8_t(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return bytes;
}

}  // namespace

TEST_CASE("half, bfloat16 and float8 decode exactly", "[quant]") {
  CHECK(flashps::half_to_float(0x3C00) == 1.0f);
  CHECK(flashps::half_to_float(0xC000) == -2.0f);
  CHECK(flashps::half_to_float(0x3555) == 0.333251953125f);
  CHECK(flashps::half_to_float(0x0001) == std::ldexp(1.0f, -24));  // smallest subnormal
  CHECK(flashps::half_to_float(0x03FF) == std::ldexp(1023.0f, -24));
  CHECK(flashps::half_to_float(0x7BFF) == 65504.0f);
  CHECK(std::isinf(flashps::half_to_float(0xFC00)));
  CHECK(std::isnan(flashps::half_to_float(0x7E00)));
  CHECK(bits_of(flashps::half_to_float(0x8000)) == 0x80000000u);  // -0 keeps its sign
  CHECK(flashps::bf16_bits_to_float(0x3F80) == 1.0f);
  CHECK(flashps::bf16_bits_to_float(0xC0A0) == -5.0f);

  // float8_e4m3fn by its definition: e > 0: 2^(e-7) (1 + m/8); e = 0: 2^-6 m/8; 0x7F, 0xFF NaN.
  for (int byte = 0; byte < 256; ++byte) {
    const float decoded = flashps::float8_e4m3fn_to_float(uint8_t(byte));
    const int e = (byte >> 3) & 15, m = byte & 7;
    if ((byte & 0x7F) == 0x7F) {
      CHECK(std::isnan(decoded));
      continue;
    }
    float expected = e > 0 ? std::ldexp(1.0f + m / 8.0f, e - 7) : std::ldexp(m / 8.0f, -6);
    if (byte & 0x80) expected = -expected;
    INFO("e4m3fn byte " << byte);
    CHECK(bits_of(decoded) == bits_of(expected));
  }
  CHECK(flashps::float8_e4m3fn_to_float(0x7E) == 448.0f);  // the format's largest value
  // float8_e5m2: e > 0: 2^(e-15) (1 + m/4); 0x7C infinity.
  CHECK(flashps::float8_e5m2_to_float(0x3C) == 1.0f);
  CHECK(flashps::float8_e5m2_to_float(0x01) == std::ldexp(1.0f, -16));
  CHECK(std::isinf(flashps::float8_e5m2_to_float(0x7C)));
}

TEST_CASE("legacy quant blocks decode as ggml defines them", "[quant]") {
  // Q8_0: d = 0.5 (F16 0x3800), values -3, 0, 7, ...
  std::vector<uint8_t> q8(34, 0);
  q8[0] = 0x00, q8[1] = 0x38;
  q8[2] = uint8_t(int8_t(-3)), q8[4] = 7, q8[33] = uint8_t(int8_t(-128));
  std::vector<float> out(32);
  flashps::ggml_dequantize(GgmlType::Q8_0, q8.data(), 32, out.data());
  CHECK(out[0] == -1.5f);
  CHECK(out[1] == 0.0f);
  CHECK(out[2] == 3.5f);
  CHECK(out[31] == -64.0f);

  // Q4_0: d = 2; byte j holds value j (low nibble) and value j + 16 (high nibble); (q - 8) * d.
  std::vector<uint8_t> q4(18, 0);
  q4[0] = 0x00, q4[1] = 0x40;
  q4[2] = 0xF0;  // value 0: q = 0 -> -16, value 16: q = 15 -> 14
  q4[3] = 0x89;  // value 1: q = 9 -> 2, value 17: q = 8 -> 0
  flashps::ggml_dequantize(GgmlType::Q4_0, q4.data(), 32, out.data());
  CHECK(out[0] == -16.0f);
  CHECK(out[16] == 14.0f);
  CHECK(out[1] == 2.0f);
  CHECK(out[17] == 0.0f);

  // Q5_1: d = 1, m = -1; the fifth bit of value j is bit j of qh.
  std::vector<uint8_t> q5(24, 0);
  q5[0] = 0x00, q5[1] = 0x3C, q5[2] = 0x00, q5[3] = 0xBC;
  q5[4] = 0x01;         // qh bit 0: value 0 gets 16
  q5[4 + 2] = 0x01;     // qh bit 16: value 16 gets 16
  q5[8] = 0x32;         // value 0 low nibble 2, value 16 low nibble 3
  flashps::ggml_dequantize(GgmlType::Q5_1, q5.data(), 32, out.data());
  CHECK(out[0] == 17.0f);   // (2 | 16) * 1 - 1
  CHECK(out[16] == 18.0f);  // (3 | 16) * 1 - 1
  CHECK(out[1] == -1.0f);

  CHECK_THROWS_AS(flashps::ggml_dequantize(GgmlType::Q4_0, q4.data(), 31, out.data()),
                  flashps::InvalidArgumentError);
}

TEST_CASE("K-quant blocks decode bit for bit as gguf-py's reference dequantizer", "[quant]") {
  const std::string path = flashps::test::source_dir() + "/tests/core/data/ggml_kquant_reference.json";
  std::ifstream stream(path);
  REQUIRE(stream.good());
  const nlohmann::json reference = nlohmann::json::parse(stream);
  REQUIRE(reference.at("types").size() >= 5);
  for (const auto& [name, entry] : reference.at("types").items()) {
    INFO(name);
    const flashps::GgmlTypeTraits* traits = nullptr;
    for (uint32_t type = 0; type < 64 && !traits; ++type) {
      const flashps::GgmlTypeTraits* candidate = flashps::ggml_type_traits(type);
      if (candidate && name == candidate->name) traits = candidate;
    }
    REQUIRE(traits != nullptr);
    const std::vector<uint8_t> blocks = from_hex(entry.at("blocks_hex").get<std::string>());
    const std::vector<double> expected = entry.at("values").get<std::vector<double>>();
    REQUIRE(blocks.size() % size_t(traits->type_size) == 0);
    const int64_t count = int64_t(blocks.size()) / traits->type_size * traits->block_size;
    REQUIRE(size_t(count) == expected.size());
    std::vector<float> decoded(expected.size());
    flashps::ggml_dequantize(traits->type, blocks.data(), count, decoded.data());
    size_t mismatches = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
      if (bits_of(decoded[i]) != bits_of(float(expected[i]))) {
        if (mismatches++ == 0) FAIL_CHECK("value " << i << ": " << decoded[i] << " != " << expected[i]);
      }
    }
    CHECK(mismatches == 0);
  }
}
