// GgufFile against the golden GGUF fixtures (written by llama.cpp's gguf-py; every tensor's
// dequantized float32 bytes have a SHA-256 in gguf_tensors.json), the writer's round trip, and
// hostile files: each refused with an error naming the file (and tensor), never a crash.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "core/diagnostics/error.h"
#include "core/files/gguf_file.h"
#include "support/fixtures.h"
#include "support/sha256.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;
using flashps::GgmlType;
using flashps::GgufFile;
using flashps::GgufWriter;

namespace {

nlohmann::json read_json(const fs::path& path) {
  std::ifstream stream(path);
  return nlohmann::json::parse(stream);
}

// A small valid file: a Q8_0 matrix [2 rows of 32], an F16 vector, an F32 vector.
GgufWriter small_writer() {
  GgufWriter writer;
  writer.set_string("general.architecture", "flux");
  writer.set_uint32("general.file_type", 7);
  std::vector<uint8_t> q8(2 * 34, 1);
  q8[0] = 0x00, q8[1] = 0x3C, q8[34] = 0x00, q8[35] = 0x38;  // scales 1 and 0.5
  writer.add_tensor("img_in.weight", GgmlType::Q8_0, {32, 2}, q8.data(), q8.size());
  const uint16_t halves[3] = {0x3C00, 0xC000, 0x3800};
  writer.add_tensor("img_in.bias", GgmlType::F16, {3}, halves, sizeof halves);
  const float floats[2] = {0.25f, -4.0f};
  writer.add_tensor("norm.scale", GgmlType::F32, {2}, floats, sizeof floats);
  return writer;
}

// Where `text` first occurs in `bytes`.
size_t find_bytes(const std::vector<uint8_t>& bytes, const std::string& text) {
  auto found = std::search(bytes.begin(), bytes.end(), text.begin(), text.end());
  REQUIRE(found != bytes.end());
  return size_t(found - bytes.begin());
}

template <typename T>
void put(std::vector<uint8_t>& bytes, size_t at, T value) {
  std::memcpy(bytes.data() + at, &value, sizeof value);
}

std::string error_of(const std::vector<uint8_t>& bytes) {
  try {
    GgufFile::parse(bytes.data(), bytes.size(), "hostile.gguf");
  } catch (const flashps::Error& error) {
    return error.what();
  }
  return "";
}

}  // namespace

TEST_CASE("GGUF fixtures decode bit for bit as gguf-py dequantizes them", "[gguf][fixtures]") {
  FLASHPS_REQUIRE_FIXTURE(dir, "gguf_flux_fill_tiny");
  const nlohmann::json expected = read_json(dir / "gguf_tensors.json");
  const nlohmann::json cases = read_json(dir / "cases.json");
  std::set<std::string> on_disk;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".gguf") on_disk.insert(entry.path().filename());
  }
  REQUIRE(!on_disk.empty());
  for (const std::string& name : on_disk) {
    INFO(name);
    REQUIRE(expected.contains(name));
    const auto file = GgufFile::open((dir / name).string());
    CHECK(file->version() == 3);
    const nlohmann::json& tensors = expected.at(name);
    CHECK(file->tensors().size() == tensors.size());
    if (cases.contains("files") && cases["files"].contains(name)) {
      for (const auto& [key, value] : cases["files"][name].at("metadata").items()) {
        INFO(key);
        if (value.is_string()) CHECK(file->metadata_string(key) == value.get<std::string>());
        if (value.is_number_integer()) CHECK(file->metadata_integer(key) == value.get<int64_t>());
      }
    }
    for (const auto& [tensor_name, facts] : tensors.items()) {
      INFO(tensor_name);
      const flashps::GgufTensor* tensor = file->find(tensor_name);
      REQUIRE(tensor != nullptr);
      CHECK(std::string(flashps::ggml_type_name(uint32_t(tensor->type))) == facts.at("type").get<std::string>());
      CHECK(tensor->ne == facts.at("ne").get<std::vector<int64_t>>());
      CHECK(tensor->shape == facts.at("shape").get<std::vector<int64_t>>());
      CHECK(tensor->offset == facts.at("data_offset").get<size_t>());
      CHECK(tensor->byte_size == facts.at("n_bytes").get<size_t>());
      std::vector<float> values(size_t(tensor->element_count));
      file->dequantize(*tensor, values.data());
      CHECK(flashps::test::sha256_hex(values.data(), values.size() * 4) ==
            facts.at("sha256_dequantized_f32le").get<std::string>());
      double sum = 0;
      for (float value : values) sum += value;
      CHECK(sum == Approx(facts.at("sum").get<double>()).margin(1e-9));
    }
  }
}

TEST_CASE("GGUF writer and reader round-trip tensors and metadata", "[gguf]") {
  flashps::test::TempDir temp;
  const std::string path = (temp.path() / "small.gguf").string();
  small_writer().write(path);
  const auto file = GgufFile::open(path);
  CHECK(file->metadata_string("general.architecture") == "flux");
  CHECK(file->metadata_integer("general.file_type") == 7);
  CHECK(!file->metadata_string("general.file_type"));
  REQUIRE(file->tensors().size() == 3);
  const flashps::GgufTensor& matrix = file->tensors()[0];
  CHECK(matrix.name == "img_in.weight");
  CHECK(matrix.shape == std::vector<int64_t>{2, 32});
  CHECK(matrix.offset % 32 == 0);
  std::vector<float> values(64);
  file->dequantize(matrix, values.data());
  CHECK(values[0] == 1.0f);   // 1 * 1
  CHECK(values[32] == 0.5f);  // 1 * 0.5
  std::vector<float> halves(3);
  file->dequantize(*file->find("img_in.bias"), halves.data());
  CHECK(halves == std::vector<float>{1.0f, -2.0f, 0.5f});
}

TEST_CASE("hostile GGUF files are refused with the file and the problem", "[gguf]") {
  const std::vector<uint8_t> valid = small_writer().encode();
  REQUIRE(error_of(valid).empty());

  SECTION("every truncation into the data is an error, never a crash") {
    const auto file = GgufFile::parse(valid.data(), valid.size(), "valid.gguf");
    size_t data_end = 0;
    for (const flashps::GgufTensor& tensor : file->tensors())
      data_end = std::max(data_end, tensor.offset + tensor.byte_size);
    for (size_t size = 0; size < valid.size(); ++size) {
      const std::vector<uint8_t> cut(valid.begin(), valid.begin() + long(size));
      const std::string error = error_of(cut);
      INFO("truncated to " << size << " bytes of " << valid.size());
      if (size < data_end) {
        CHECK(error.rfind("hostile.gguf: ", 0) == 0);
      } else {
        CHECK(error.empty());  // only the padding after the last tensor is gone
      }
    }
  }
  SECTION("not GGUF, version 1, big-endian") {
    std::vector<uint8_t> bytes = valid;
    bytes[0] = 'X';
    CHECK_THAT(error_of(bytes), Catch::Contains("not a GGUF file"));
    bytes = valid;
    put<uint32_t>(bytes, 4, 1);
    CHECK_THAT(error_of(bytes), Catch::Contains("version 1"));
    bytes = valid;
    put<uint32_t>(bytes, 4, 0x03000000);
    CHECK_THAT(error_of(bytes), Catch::Contains("big-endian"));
  }
  SECTION("counts beyond the file") {
    std::vector<uint8_t> bytes = valid;
    put<uint64_t>(bytes, 8, uint64_t(1) << 60);
    CHECK_THAT(error_of(bytes), Catch::Contains("tensor count"));
    bytes = valid;
    put<uint64_t>(bytes, 16, uint64_t(1) << 60);
    CHECK_THAT(error_of(bytes), Catch::Contains("metadata count"));
  }
  // The first tensor's entry: name (8 + 13 bytes), dimension count, 2 dimensions, type, offset.
  const size_t entry = find_bytes(valid, "img_in.weight") + 13;
  const size_t type_at = entry + 4 + 16;
  const size_t offset_at = type_at + 4;
  SECTION("an unknown or undecoded quantization type names the tensor and the type") {
    std::vector<uint8_t> bytes = valid;
    put<uint32_t>(bytes, type_at, 17);
    const std::string error = error_of(bytes);
    CHECK_THAT(error, Catch::Contains("'img_in.weight'") && Catch::Contains("IQ2_XS"));
    put<uint32_t>(bytes, type_at, 999);
    CHECK_THAT(error_of(bytes), Catch::Contains("type 999 (unknown)"));
  }
  SECTION("offsets that lie: beyond the end, misaligned, overlapping") {
    std::vector<uint8_t> bytes = valid;
    put<uint64_t>(bytes, offset_at, uint64_t(1) << 40);
    CHECK_THAT(error_of(bytes), Catch::Contains("'img_in.weight'") && Catch::Contains("beyond the end"));
    put<uint64_t>(bytes, offset_at, 8);
    CHECK_THAT(error_of(bytes), Catch::Contains("not aligned"));
    bytes = valid;
    const size_t bias_offset_at = find_bytes(bytes, "img_in.bias") + 11 + 4 + 8 + 4;
    put<uint64_t>(bytes, bias_offset_at, 0);  // onto the matrix's bytes
    CHECK_THAT(error_of(bytes), Catch::Contains("'img_in.weight' and 'img_in.bias' overlap"));
  }
  SECTION("rows that are not whole blocks, zero and huge dimensions") {
    std::vector<uint8_t> bytes = valid;
    put<uint64_t>(bytes, entry + 4, 31);
    CHECK_THAT(error_of(bytes), Catch::Contains("not whole Q8_0 blocks"));
    put<uint64_t>(bytes, entry + 4, 0);
    CHECK_THAT(error_of(bytes), Catch::Contains("zero or too large"));
    put<uint64_t>(bytes, entry + 4, uint64_t(1) << 62);
    put<uint64_t>(bytes, entry + 12, uint64_t(1) << 62);
    CHECK_THAT(error_of(bytes), Catch::Contains("'img_in.weight'"));
  }
  SECTION("a duplicate tensor name") {
    GgufWriter writer;
    const float values[1] = {1.0f};
    writer.add_tensor("block.a", GgmlType::F32, {1}, values, sizeof values);
    writer.add_tensor("block.b", GgmlType::F32, {1}, values, sizeof values);
    std::vector<uint8_t> bytes = writer.encode();
    REQUIRE(error_of(bytes).empty());
    bytes[find_bytes(bytes, "block.b") + 6] = 'a';
    CHECK_THAT(error_of(bytes), Catch::Contains("tensor 'block.a': appears twice"));
  }
  SECTION("a NaN scale is refused when the tensor is decoded") {
    GgufWriter writer;
    std::vector<uint8_t> q8(34, 1);
    q8[0] = 0x00, q8[1] = 0x7E;  // F16 NaN
    writer.add_tensor("double_blocks.0.img_mlp.0.weight", GgmlType::Q8_0, {32}, q8.data(), q8.size());
    const std::vector<uint8_t> bytes = writer.encode();
    const auto file = GgufFile::parse(bytes.data(), bytes.size(), "nan.gguf");
    std::vector<float> values(32);
    try {
      file->dequantize(file->tensors()[0], values.data());
      FAIL("a NaN scale decoded without an error");
    } catch (const flashps::CorruptDataError& error) {
      CHECK_THAT(error.what(), Catch::Contains("nan.gguf: tensor 'double_blocks.0.img_mlp.0.weight'") &&
                                   Catch::Contains("NaN"));
    }
  }
}
