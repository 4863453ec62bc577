// T5 tokenizer (Flux's tokenizer_2) against transformers' T5Tokenizer (../shared/fixtures/t5_tokenizer).
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "models/t5/sentencepiece_model.h"
#include "models/t5/t5_tokenizer.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"

using namespace flashps;

namespace {

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream stream(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(stream), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

}  // namespace

TEST_CASE("T5 tokenizer matches transformers' on every golden prompt", "[models][t5][fixtures]") {
  FLASHPS_REQUIRE_FIXTURE(dir, "t5_tokenizer");
  const T5Tokenizer tokenizer = T5Tokenizer::load((dir / "spiece.model").string());
  CHECK(tokenizer.vocab_size() == 1000);
  CHECK(tokenizer.pad_token_id() == 0);
  CHECK(tokenizer.eos_token_id() == 1);
  CHECK(tokenizer.unk_token_id() == 2);
  const nlohmann::json cases = read_json_file((dir / "cases.json").string()).at("cases");
  REQUIRE_FALSE(cases.empty());
  int matched = 0, truncated = 0;
  for (const nlohmann::json& expected : cases) {
    const std::string text = expected.at("text").get<std::string>();
    const int max_length = expected.at("max_length").get<int>();
    INFO("\"" << text << "\" at max_length " << max_length);
    const T5Tokenizer::Encoded encoded = tokenizer.encode(text, max_length);
    const auto expected_ids = expected.at("input_ids").get<std::vector<int64_t>>();
    const auto expected_mask = expected.at("attention_mask").get<std::vector<int64_t>>();
    const auto expected_pieces = expected.at("pieces").get<std::vector<std::string>>();
    CHECK(tokenizer.pieces(text) == expected_pieces);
    CHECK(encoded.input_ids == expected_ids);
    CHECK(encoded.attention_mask == expected_mask);
    CHECK(encoded.truncated == (expected_pieces.size() >= static_cast<size_t>(max_length)));
    matched += encoded.input_ids == expected_ids && encoded.attention_mask == expected_mask;
    truncated += encoded.truncated;
  }
  CHECK(matched == static_cast<int>(cases.size()));
  CHECK(truncated >= 1);  // the README's prompt of over 77 tokens
}

TEST_CASE("T5 tokenizer encodes edge cases without failing", "[models][t5][fixtures]") {
  FLASHPS_REQUIRE_FIXTURE(dir, "t5_tokenizer");
  const T5Tokenizer tokenizer = T5Tokenizer::load((dir / "spiece.model").string());
  const T5Tokenizer::Encoded only_eos = tokenizer.encode("a long prompt", 1);
  CHECK(only_eos.input_ids == std::vector<int64_t>{tokenizer.eos_token_id()});
  CHECK(only_eos.attention_mask == std::vector<int64_t>{1});
  CHECK(only_eos.truncated);
  for (int bad : {0, -1, T5Tokenizer::kMaxLength + 1})
    CHECK_THROWS_AS(tokenizer.encode("a", bad), InvalidArgumentError);
  // Malformed UTF-8 (a lone continuation byte, a cut-off sequence, an overlong NUL) and NUL bytes.
  const std::string malformed = std::string("a \x80 b \xe2\x82 c \xc0\x80 d ") + std::string(1, '\0') + " e\xff";
  const T5Tokenizer::Encoded encoded = tokenizer.encode(malformed, 77);
  REQUIRE(encoded.input_ids.size() == 77);
  const auto text_ids = tokenizer.ids(malformed);
  REQUIRE(text_ids.size() < 76);
  CHECK(encoded.input_ids[text_ids.size()] == tokenizer.eos_token_id());
  CHECK(encoded.input_ids.back() == tokenizer.pad_token_id());
  for (int64_t id : text_ids) CHECK((id >= 0 && id < tokenizer.vocab_size()));
}

TEST_CASE("T5 tokenizer names the file and the problem of a bad spiece.model", "[models][t5]") {
  test::TempDir temp;
  const std::string missing = temp.file("spiece.model");
  CHECK_THROWS_AS(T5Tokenizer::load(missing), NotFoundError);
  CHECK_THROWS_WITH(T5Tokenizer::load(missing), Catch::Contains(missing) && Catch::Contains("no such file"));
  CHECK_THROWS_AS(T5Tokenizer::load(temp.path().string()), InvalidArgumentError);

  const std::string corrupt = temp.file("corrupt.model");
  write_bytes(corrupt, "\x0a\xff\xff\xff\xff\x0f not a protobuf");
  CHECK_THROWS_AS(T5Tokenizer::load(corrupt), CorruptDataError);
  CHECK_THROWS_WITH(T5Tokenizer::load(corrupt), Catch::Contains(corrupt) && Catch::Contains("not a SentencePiece model"));
  const std::string empty = temp.file("empty.model");
  write_bytes(empty, "");
  CHECK_THROWS_WITH(T5Tokenizer::load(empty), Catch::Contains(empty) && Catch::Contains("not a SentencePiece model"));
}

TEST_CASE("T5 tokenizer rejects a truncated spiece.model and unknown special tokens", "[models][t5][fixtures]") {
  FLASHPS_REQUIRE_FIXTURE(dir, "t5_tokenizer");
  const std::string model = read_bytes(dir / "spiece.model");
  REQUIRE(model.size() > 1000);
  test::TempDir temp;
  const std::string truncated = temp.file("spiece.model");
  for (size_t keep : {model.size() / 2, model.size() - 1, size_t{7}}) {
    INFO("first " << keep << " bytes");
    write_bytes(truncated, model.substr(0, keep));
    CHECK_THROWS_AS(T5Tokenizer::load(truncated), CorruptDataError);
    CHECK_THROWS_WITH(T5Tokenizer::load(truncated), Catch::Contains(truncated));
  }

  // Special tokens come from tokenizer_config.json beside the model (a string or an AddedToken
  // object), then special_tokens_map.json; a token that is no piece of the model is an error.
  write_bytes(truncated, model);
  write_bytes(temp.file("tokenizer_config.json"), R"({"pad_token": {"content": "</s>"}})");
  write_bytes(temp.file("special_tokens_map.json"), R"({"pad_token": "<unk>", "eos_token": "<unk>"})");
  const T5Tokenizer remapped = T5Tokenizer::load(truncated);
  CHECK(remapped.pad_token_id() == 1);
  CHECK(remapped.eos_token_id() == 2);
  write_bytes(temp.file("tokenizer_config.json"), R"({"eos_token": "<missing>"})");
  CHECK_THROWS_AS(T5Tokenizer::load(truncated), CorruptDataError);
  CHECK_THROWS_WITH(T5Tokenizer::load(truncated), Catch::Contains("'<missing>' is not a piece"));
  write_bytes(temp.file("tokenizer_config.json"), R"({"eos_token": 5})");
  CHECK_THROWS_WITH(T5Tokenizer::load(truncated), Catch::Contains("tokenizer_config.json") && Catch::Contains("eos_token"));
}

TEST_CASE("a spiece.model written by the SDK reads back field for field and tokenizes", "[models][t5]") {
  namespace sp = sentencepiece;
  sp::ModelProto model;
  model.pieces = {{"<pad>", 0, sp::PieceType::control}, {"</s>", 0, sp::PieceType::control},
                  {"<unk>", 0, sp::PieceType::unknown}, {"\xe2\x96\x81" "ab", -1.5f, sp::PieceType::normal},
                  {"a", -4.0f, sp::PieceType::normal}, {"b", -4.25f, sp::PieceType::normal},
                  {"\xe2\x96\x81", -3.0f, sp::PieceType::normal}};
  model.trainer.pad_id = 0;
  model.trainer.eos_id = 1;
  model.trainer.unk_id = 2;
  model.trainer.bos_id = -1;  // a negative int32: a ten-byte varint
  model.trainer.byte_fallback = false;
  model.normalizer.name = "identity";
  model.normalizer.add_dummy_prefix = true;
  const std::string bytes = sp::serialize_model_proto(model);
  const sp::ModelProto read = sp::parse_model_proto(bytes, "written");
  REQUIRE(read.pieces.size() == model.pieces.size());
  for (size_t i = 0; i < read.pieces.size(); ++i) {
    CHECK(read.pieces[i].text == model.pieces[i].text);
    CHECK(read.pieces[i].score == model.pieces[i].score);
    CHECK(read.pieces[i].type == model.pieces[i].type);
  }
  CHECK(read.trainer.bos_id == -1);
  CHECK(read.trainer.eos_id == 1);
  CHECK(read.trainer.pad_id == 0);
  CHECK(read.normalizer.name == "identity");
  const T5Tokenizer tokenizer = T5Tokenizer::from_model_bytes(bytes, "written");
  CHECK(tokenizer.ids("ab ba") == std::vector<int64_t>{3, 6, 5, 4});  // "▁ab", "▁", "b", "a"
  CHECK(tokenizer.encode("ab", 4).input_ids == std::vector<int64_t>{3, 1, 0, 0});
}
