// Safetensors reader/writer, the LibTorch bridge and read_json_file.
// ATen comes before Catch2 so that Catch's CHECK replaces glog's CHECK(condition), which aborts.
#include <ATen/ATen.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <random>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "core/files/safetensors.h"
#include "core/files/tensor_io.h"
#include "support/fixtures.h"

namespace fs = std::filesystem;
using flashps::DType;
using flashps::SafetensorsFile;
using flashps::SafetensorsWriter;

namespace {

// A fresh directory under the system temp dir, removed with its contents at scope exit.
class TemporaryDirectory {
 public:
  TemporaryDirectory() {
    static int counter = 0;
    path_ = fs::temp_directory_path() /
            ("flashps-safetensors-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TemporaryDirectory() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }
  std::vector<std::string> file_names() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(path_))
      names.push_back(entry.path().filename());
    return names;
  }

 private:
  fs::path path_;
};

// Assembles a safetensors byte image: little-endian header length, header text, data bytes.
std::vector<uint8_t> assemble(const std::string& header, const std::vector<uint8_t>& data = {}) {
  std::vector<uint8_t> bytes(8 + header.size() + data.size());
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(uint64_t(header.size()) >> (8 * i));
  std::copy(header.begin(), header.end(), bytes.begin() + 8);
  std::copy(data.begin(), data.end(), bytes.begin() + 8 + long(header.size()));
  return bytes;
}

std::shared_ptr<const SafetensorsFile> parse(const std::vector<uint8_t>& bytes) {
  return SafetensorsFile::parse(bytes.data(), bytes.size(), "test.safetensors");
}

// The flashps::Error message of parsing `bytes`, or "" if it parsed. Any other exception fails.
std::string parse_error(const std::vector<uint8_t>& bytes) {
  try {
    parse(bytes);
  } catch (const flashps::Error& error) {
    return error.what();
  }
  return "";
}

std::vector<uint8_t> zeros(size_t size) { return std::vector<uint8_t>(size, 0); }

std::vector<uint8_t> read_file(const fs::path& path) {
  std::ifstream stream(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(stream), std::istreambuf_iterator<char>()};
}

void write_file(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream stream(path, std::ios::binary);
  stream.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

}  // namespace

TEST_CASE("dtype names and sizes round-trip", "[safetensors]") {
  const std::vector<std::pair<DType, size_t>> expected = {
      {DType::F64, 8}, {DType::F32, 4}, {DType::F16, 2}, {DType::BF16, 2}, {DType::I64, 8},
      {DType::I32, 4}, {DType::I16, 2}, {DType::I8, 1},  {DType::U8, 1},   {DType::BOOL, 1},
      {DType::F8_E4M3, 1}, {DType::F8_E5M2, 1}};
  for (const auto& [dtype, size] : expected) {
    CHECK(flashps::dtype_from_safetensors_name(flashps::dtype_safetensors_name(dtype)) == dtype);
    CHECK(flashps::dtype_size(dtype) == size);
  }
  CHECK_THROWS_AS(flashps::dtype_from_safetensors_name("F4"), flashps::Error);
}

TEST_CASE("writer and reader round-trip every dtype, zero-size tensors and metadata",
          "[safetensors]") {
  TemporaryDirectory directory;
  const fs::path path = directory.path() / "all.safetensors";
  struct Input {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
  };
  const std::vector<Input> inputs = {
      {"f64", DType::F64, {2, 3}},    {"f32", DType::F32, {5}},    {"f16", DType::F16, {3, 1}},
      {"bf16", DType::BF16, {2}},     {"i64", DType::I64, {1, 2}}, {"i32", DType::I32, {3}},
      {"i16", DType::I16, {2, 2}},    {"i8", DType::I8, {7}},      {"empty", DType::F32, {0, 4}},
      {"u8", DType::U8, {3, 3}},      {"bool", DType::BOOL, {4}},  {"scalar", DType::F32, {}},
      {"also_empty", DType::I64, {0}}};
  SafetensorsWriter writer;
  std::vector<std::vector<uint8_t>> payloads;
  uint8_t next_byte = 1;
  for (const Input& input : inputs) {
    size_t size = flashps::dtype_size(input.dtype);
    for (int64_t dimension : input.shape) size *= size_t(dimension);
    std::vector<uint8_t> bytes(size);
    for (uint8_t& byte : bytes) byte = input.dtype == DType::BOOL ? next_byte++ % 2 : next_byte++;
    writer.add(input.name, input.dtype, input.shape, bytes.data(), bytes.size());
    payloads.push_back(bytes);
  }
  writer.set_metadata("author", "flashps tests");
  writer.write(path.string());

  // Atomic write: only the final file remains, and the data buffer starts 8-byte aligned.
  CHECK(directory.file_names() == std::vector<std::string>{"all.safetensors"});
  const std::vector<uint8_t> raw = read_file(path);
  REQUIRE(raw.size() >= 8);
  uint64_t header_length = 0;
  for (int i = 0; i < 8; ++i) header_length |= uint64_t(raw[i]) << (8 * i);
  CHECK(header_length % 8 == 0);

  auto file = SafetensorsFile::open(path.string());
  CHECK(file->source_name() == path.string());
  const std::map<std::string, std::string> expected_metadata = {{"format", "pt"},
                                                                {"author", "flashps tests"}};
  CHECK(file->metadata() == expected_metadata);
  REQUIRE(file->tensors().size() == inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const flashps::TensorInfo& info = file->tensors()[i];
    INFO("tensor " << inputs[i].name);
    CHECK(info.name == inputs[i].name);  // header order is insertion order
    CHECK(info.dtype == inputs[i].dtype);
    CHECK(info.shape == inputs[i].shape);
    REQUIRE(info.byte_size() == payloads[i].size());
    const uint8_t* stored = file->data(info);
    CHECK(std::vector<uint8_t>(stored, stored + info.byte_size()) == payloads[i]);
    CHECK(file->find(inputs[i].name) == &info);
  }
  CHECK(file->find("missing") == nullptr);
  CHECK(file->find("empty")->element_count() == 0);
  CHECK(file->find("scalar")->element_count() == 1);

  // The in-memory parser sees exactly what the mapped reader sees.
  auto parsed = SafetensorsFile::parse(raw.data(), raw.size(), "copy");
  REQUIRE(parsed->tensors().size() == inputs.size());
  CHECK(std::memcmp(parsed->data(parsed->tensors()[0]), payloads[0].data(), payloads[0].size()) ==
        0);
}

TEST_CASE("writing over an existing file replaces it", "[safetensors]") {
  TemporaryDirectory directory;
  const std::string path = (directory.path() / "model.safetensors").string();
  for (int32_t value : {1, 2}) {
    SafetensorsWriter writer;
    writer.add("value", DType::I32, {1}, &value, sizeof value);
    writer.write(path);
  }
  auto file = SafetensorsFile::open(path);
  int32_t stored = 0;
  std::memcpy(&stored, file->data(*file->find("value")), sizeof stored);
  CHECK(stored == 2);
  CHECK(directory.file_names().size() == 1);
}

TEST_CASE("writing into a missing directory throws an Error naming the path", "[safetensors]") {
  TemporaryDirectory directory;
  const std::string path = (directory.path() / "no-such-dir" / "model.safetensors").string();
  SafetensorsWriter writer;
  const float value = 1.0f;
  writer.add("x", DType::F32, {1}, &value, sizeof value);
  CHECK_THROWS_WITH(writer.write(path),
                    Catch::StartsWith(path + ": ") && Catch::Contains("No such file or directory"));
  CHECK(directory.file_names().empty());
}

TEST_CASE("writer rejects inconsistent tensors", "[safetensors]") {
  SafetensorsWriter writer;
  const float values[2] = {1, 2};
  CHECK_THROWS_WITH(writer.add("x", DType::F32, {3}, values, sizeof values),
                    Catch::Contains("'x'") && Catch::Contains("needs 12"));
  CHECK_THROWS_WITH(writer.add("x", DType::F32, {-2}, values, sizeof values),
                    Catch::Contains("negative"));
  writer.add("x", DType::F32, {2}, values, sizeof values);
  CHECK_THROWS_WITH(writer.add("x", DType::F32, {2}, values, sizeof values),
                    Catch::Contains("added twice"));
  CHECK_THROWS_WITH(writer.add("__metadata__", DType::F32, {2}, values, sizeof values),
                    Catch::Contains("reserved"));
}

TEST_CASE("malformed files are rejected with clear messages", "[safetensors]") {
  const std::string f32_2x3 = R"("x.weight":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]})";

  SECTION("empty or truncated length") {
    CHECK_THAT(parse_error({}), Catch::Equals("test.safetensors: file is empty"));
    CHECK_THAT(parse_error({1, 2, 3}), Catch::Contains("only 3 bytes"));
  }
  SECTION("header length beyond the file") {
    std::vector<uint8_t> bytes = assemble("{}");
    bytes[0] = 200;
    CHECK_THAT(parse_error(bytes), Catch::Contains("header length 200 extends beyond"));
    bytes[0] = 0;
    bytes[7] = 0xff;  // about 1.8e19: must not wrap around when added to 8
    CHECK_THAT(parse_error(bytes), Catch::Contains("exceeds the limit"));
  }
  SECTION("header not JSON, or not an object") {
    CHECK_THAT(parse_error(assemble("{\"x\":")), Catch::Contains("header is not valid JSON"));
    CHECK_THAT(parse_error(assemble("not json")), Catch::Contains("header is not valid JSON"));
    CHECK_THAT(parse_error(assemble("[1,2]")), Catch::Contains("must be an object, not array"));
    CHECK_THAT(parse_error(assemble("")), Catch::Contains("not valid JSON"));
    CHECK_THAT(parse_error(assemble(std::string(100, '[') + std::string(100, ']'))),
               Catch::Contains("nests deeper"));
  }
  SECTION("bad metadata") {
    CHECK_THAT(parse_error(assemble(R"({"__metadata__":{"format":1}})")),
               Catch::Contains("__metadata__ value of 'format' must be a string"));
    CHECK_THAT(parse_error(assemble(R"({"__metadata__":[]})")),
               Catch::Contains("__metadata__ must be an object"));
  }
  SECTION("bad tensor entries") {
    CHECK_THAT(
        parse_error(assemble(R"({"x":{"dtype":"F8","shape":[1],"data_offsets":[0,1]}})", zeros(1))),
        Catch::Contains("tensor 'x' has unknown dtype 'F8'"));
    CHECK_THAT(parse_error(assemble(R"({"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})",
                                    zeros(4))),
               Catch::Contains("tensor 'x' has negative dimension -1"));
    CHECK_THAT(parse_error(assemble(R"({"x":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})",
                                    zeros(4))),
               Catch::Contains("shape must be an array of integers"));
    CHECK_THAT(parse_error(assemble(R"({"x":{"shape":[1],"data_offsets":[0,4]}})", zeros(4))),
               Catch::Contains("tensor 'x' has no dtype"));
    CHECK_THAT(
        parse_error(assemble(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", zeros(4))),
        Catch::Contains("data_offsets must be two non-negative integers"));
    CHECK_THAT(parse_error(assemble(R"({"x":7})")),
               Catch::Contains("tensor 'x' entry must be an object"));
  }
  SECTION("shape and offsets disagree") {
    CHECK_THAT(
        parse_error(assemble(R"({"x.weight":{"dtype":"F32","shape":[2,3],"data_offsets":[0,12]}})",
                             zeros(24))),
        Catch::Equals("test.safetensors: tensor 'x.weight' data_offsets [0, 12] do not match "
                      "shape [2, 3] of F32 (24 bytes)"));
    CHECK_THAT(parse_error(assemble("{" + f32_2x3 + "}", zeros(23))),
               Catch::Contains("data_offsets [0, 24] extend beyond the data buffer (23 bytes)"));
    CHECK_THAT(
        parse_error(assemble(R"({"x":{"dtype":"U8","shape":[0],"data_offsets":[5,4]}})", zeros(8))),
        Catch::Contains("begin after end"));
  }
  SECTION("overlapping tensors") {
    const std::string header = R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                               R"("b":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}})";
    CHECK_THAT(parse_error(assemble(header, zeros(24))),
               Catch::Contains("tensors 'a' [0, 16] and 'b' [8, 24] overlap"));
    CHECK_THAT(parse_error(assemble(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                                    R"("a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
                                    zeros(2))),
               Catch::Contains("duplicate entry 'a'"));
  }
  SECTION("shape products that overflow") {
    CHECK_THAT(parse_error(assemble(R"({"x":{"dtype":"F32","shape":[4294967296,4294967296,16],)"
                                    R"("data_offsets":[0,0]}})")),
               Catch::Contains("tensor 'x' shape [4294967296, 4294967296, 16] of F32 overflows"));
    CHECK_THAT(parse_error(assemble(R"({"x":{"dtype":"F64","shape":[2305843009213693952],)"
                                    R"("data_offsets":[0,0]}})")),
               Catch::Contains("overflows"));
    CHECK_THAT(parse_error(assemble(R"({"x":{"dtype":"U8","shape":[18446744073709551615],)"
                                    R"("data_offsets":[0,0]}})")),
               Catch::Contains("too large"));
  }
}

TEST_CASE("edge cases that are valid", "[safetensors]") {
  SECTION("zero-size tensors may share offsets and sit inside other tensors") {
    auto file =
        parse(assemble(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                       R"("b":{"dtype":"F32","shape":[0,3],"data_offsets":[4,4]},)"
                       R"("c":{"dtype":"I64","shape":[4611686018427387904,4611686018427387904,0],)"
                       R"("data_offsets":[8,8]}})",
                       zeros(8)));
    REQUIRE(file->tensors().size() == 3);
    CHECK(file->find("c")->element_count() == 0);
  }
  SECTION("no tensors at all") {
    CHECK(parse(assemble("{}"))->tensors().empty());
    CHECK(parse(assemble("  {}  "))->tensors().empty());
  }
  SECTION("unknown fields are ignored and unpadded headers are read") {
    auto file = parse(
        assemble(R"({"x":{"dtype":"U8","shape":[3],"data_offsets":[0,3],"extra":1}})", {7, 8, 9}));
    CHECK(file->data(*file->find("x"))[2] == 9);
  }
}

TEST_CASE("no truncation or header byte flip of a valid file crashes the parser", "[safetensors]") {
  SafetensorsWriter writer;
  const std::vector<float> values = {1, 2, 3, 4, 5, 6};
  writer.add("a", DType::F32, {2, 3}, values.data(), values.size() * sizeof(float));
  writer.add("b", DType::F32, {0}, nullptr, 0);
  writer.add("c", DType::U8, {2}, "xy", 2);
  TemporaryDirectory directory;
  const fs::path path = directory.path() / "valid.safetensors";
  writer.write(path.string());
  const std::vector<uint8_t> valid = read_file(path);

  size_t accepted = 0;
  for (size_t length = 0; length < valid.size(); ++length) {
    std::vector<uint8_t> prefix(valid.begin(), valid.begin() + long(length));
    if (parse_error(prefix).empty()) ++accepted;
  }
  CHECK(accepted == 0);  // every truncation loses either header bytes or tensor bytes
  std::mt19937 random(42);
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<uint8_t> mutated = valid;
    mutated[random() % std::min<size_t>(mutated.size(), 160)] = uint8_t(random());
    (void)parse_error(mutated);  // must either parse or throw flashps::Error
  }
}

TEST_CASE("open reports unreadable files by path", "[safetensors]") {
  TemporaryDirectory directory;
  const fs::path empty = directory.path() / "empty.safetensors";
  write_file(empty, {});
  CHECK_THROWS_WITH(SafetensorsFile::open(empty.string()),
                    Catch::Equals(empty.string() + ": file is empty"));
  const fs::path short_file = directory.path() / "short.safetensors";
  write_file(short_file, {1, 0, 0});
  CHECK_THROWS_WITH(SafetensorsFile::open(short_file.string()),
                    Catch::StartsWith(short_file.string() + ": file is only 3 bytes"));
  const std::string missing = (directory.path() / "missing.safetensors").string();
  CHECK_THROWS_AS(SafetensorsFile::open(missing), flashps::NotFoundError);
  CHECK_THROWS_WITH(SafetensorsFile::open(missing), Catch::Equals(missing + ": file not found"));
  CHECK_THROWS_WITH(SafetensorsFile::open(directory.path().string()),
                    Catch::Contains("not a regular file"));
}

TEST_CASE("LibTorch tensors round-trip through safetensors files", "[safetensors]") {
  TemporaryDirectory directory;
  const std::string path = (directory.path() / "tensors.safetensors").string();
  at::manual_seed(7);
  const at::Tensor floats = at::randn({3, 4});
  std::vector<std::pair<std::string, at::Tensor>> tensors = {
      {"f64", at::randn({2, 2}, at::kDouble)},
      {"f32", floats},
      {"f16", at::randn({5}).to(at::kHalf)},
      {"bf16", at::randn({2, 3}).to(at::kBFloat16)},
      {"i64", at::arange(-3, 3, at::kLong)},
      {"i32", at::arange(0, 6, at::kInt).reshape({2, 3})},
      {"i16", at::arange(-2, 2, at::kShort)},
      {"i8", at::arange(-5, 5, at::kChar)},
      {"u8", at::arange(250, 256, at::kInt).to(at::kByte)},
      {"bool", at::randn({7}) > 0},
      {"transposed", floats.t()},  // non-contiguous: must be written in logical order
      {"zero_size", at::empty({0, 5})},
      {"scalar", at::scalar_tensor(2.5)},
  };
  flashps::save_safetensors(path, tensors, {{"source", "test"}});

  auto loaded = flashps::load_safetensors(path);
  REQUIRE(loaded.size() == tensors.size());
  for (const auto& [name, expected] : tensors) {
    INFO("tensor " << name);
    const at::Tensor& actual = loaded.at(name);
    CHECK(actual.scalar_type() == expected.scalar_type());
    CHECK(actual.sizes() == expected.sizes());
    CHECK(actual.is_contiguous());
    CHECK(at::equal(actual, expected));
  }
  auto file = SafetensorsFile::open(path);
  CHECK(file->metadata().at("source") == "test");
  CHECK(file->tensors()[0].name == "f64");

  CHECK_THROWS_WITH(flashps::save_safetensors(path, {{"c", at::randn({2}, at::kComplexFloat)}}),
                    Catch::Contains("'c'") && Catch::Contains("cannot be stored"));
  CHECK_THROWS_WITH(flashps::save_safetensors(path, {{"u", at::Tensor()}}),
                    Catch::Contains("'u' is undefined"));
  for (DType dtype : {DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64, DType::I32,
                      DType::I16, DType::I8, DType::U8, DType::BOOL}) {
    CHECK(flashps::to_dtype(flashps::to_scalar_type(dtype)) == dtype);
  }
}

TEST_CASE("BOOL bytes other than 0 and 1 read as true", "[safetensors]") {
  auto file =
      parse(assemble(R"({"flags":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}})", {0, 1, 7}));
  const at::Tensor flags = flashps::read_tensor(*file, *file->find("flags"));
  CHECK(flags.scalar_type() == at::kBool);
  CHECK(at::equal(flags, at::tensor({0, 1, 1}, at::kInt).to(at::kBool)));
  flashps::TensorInfo forged = *file->find("flags");
  forged.end = 1000;  // offsets not validated against this file must not be read
  CHECK_THROWS_WITH(flashps::read_tensor(*file, forged), Catch::Contains("does not belong"));
}

TEST_CASE("float8 tensors read as float32, exactly", "[safetensors]") {
  // e4m3fn: 1.0 = 0x38, -2.0 = 0xC0, 448 (its largest) = 0x7E, 2^-9 (smallest) = 0x01;
  // e5m2: 1.0 = 0x3C, -0.5 = 0xB8.
  auto file = parse(assemble(
      R"({"w":{"dtype":"F8_E4M3","shape":[2,2],"data_offsets":[0,4]},)"
      R"("v":{"dtype":"F8_E5M2","shape":[2],"data_offsets":[4,6]}})",
      {0x38, 0xC0, 0x7E, 0x01, 0x3C, 0xB8}));
  const at::Tensor w = flashps::mapped_tensor(*file, *file->find("w"));
  CHECK(w.scalar_type() == at::kFloat);
  CHECK(w.sizes() == at::IntArrayRef({2, 2}));
  CHECK(at::equal(w, at::tensor({1.0f, -2.0f, 448.0f, 1.0f / 512}).reshape({2, 2})));
  const at::Tensor v = flashps::read_tensor(*file, *file->find("v"));
  CHECK(at::equal(v, at::tensor({1.0f, -0.5f})));
}

TEST_CASE("fixture safetensors files open and have the documented layout", "[safetensors]") {
  FLASHPS_REQUIRE_FIXTURE(dir, "flux_fill_tiny");
  auto weights = SafetensorsFile::open((dir / "diffusion_pytorch_model.safetensors").string());
  REQUIRE(!weights->tensors().empty());
  CHECK(weights->metadata().at("format") == "pt");
  CHECK(weights->tensors().front().name == "time_text_embed.timestep_embedder.linear_1.weight");
  for (const flashps::TensorInfo& info : weights->tensors()) {
    INFO("tensor " << info.name);
    CHECK(info.dtype == DType::F32);
    CHECK(info.byte_size() == size_t(info.element_count()) * 4);
  }
  const flashps::TensorInfo* first =
      weights->find("time_text_embed.timestep_embedder.linear_1.weight");
  REQUIRE(first != nullptr);
  CHECK(first->shape == std::vector<int64_t>({32, 256}));
  const at::Tensor first_tensor = flashps::read_tensor(*weights, *first);
  CHECK(at::isfinite(first_tensor).all().item<bool>());
  CHECK(first_tensor.abs().sum().item<float>() > 0);

  auto cases = SafetensorsFile::open((dir / "cases.safetensors").string());
  const nlohmann::json cases_json = flashps::read_json_file((dir / "cases.json").string());
  for (const auto& test_case : cases_json.at("cases")) {
    for (const auto& [output, key] : test_case.at("outputs").items()) {
      INFO("output " << output);
      CHECK(cases->find(key.get<std::string>()) != nullptr);
    }
  }
}

TEST_CASE("read_json_file names the file in its errors", "[safetensors][json_file]") {
  TemporaryDirectory directory;
  const fs::path good = directory.path() / "good.json";
  const std::string text = R"({"a": [1, 2], "b": "c"})";
  write_file(good, std::vector<uint8_t>(text.begin(), text.end()));
  const nlohmann::json parsed = flashps::read_json_file(good.string());
  CHECK(parsed.at("a").at(1) == 2);
  CHECK(parsed.at("b") == "c");

  const fs::path bad = directory.path() / "bad.json";
  write_file(bad, {'{', '"', 'a'});
  CHECK_THROWS_WITH(flashps::read_json_file(bad.string()),
                    Catch::StartsWith(bad.string() + ": invalid JSON"));
  const std::string missing = (directory.path() / "missing.json").string();
  CHECK_THROWS_AS(flashps::read_json_file(missing), flashps::NotFoundError);
  CHECK_THROWS_WITH(flashps::read_json_file(missing), Catch::Equals(missing + ": file not found"));
  CHECK_THROWS_WITH(flashps::read_json_file(directory.path().string()),
                    Catch::Contains("is a directory"));
}
