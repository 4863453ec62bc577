// The spiece.model check: hand-built SentencePiece models (a unigram model whose normalisation
// table maps "A" to "a") with corrupt tables or cut short, and the fuzz corpus
// (fuzz/corpus/t5_tokenizer/, which holds a table that crashed libsentencepiece).
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/diagnostics/error.h"
#include "models/t5/spiece_model_check.h"
#include "models/t5/t5_tokenizer.h"
#include "support/source_dir.h"

using namespace flashps;

namespace {

std::string varint(uint64_t value) {
  std::string bytes;
  for (; value >= 0x80; value >>= 7) bytes += static_cast<char>((value & 0x7f) | 0x80);
  return bytes + static_cast<char>(value);
}
std::string message_field(uint64_t number, const std::string& payload) {
  return varint(number << 3 | 2) + varint(payload.size()) + payload;
}
std::string number_field(uint64_t number, uint64_t value) { return varint(number << 3) + varint(value); }

enum PieceType { kNormal = 1, kUnknown = 2, kControl = 3 };
std::string piece(const std::string& text, PieceType type, float score = 0) {
  std::string score_bytes(4, '\0');
  std::memcpy(score_bytes.data(), &score, 4);  // fixed32, little-endian like the host
  return message_field(1, message_field(1, text) + varint(2 << 3 | 5) + score_bytes + number_field(3, type));
}

// A darts-clone double array of two 256-unit blocks: root -> state 256; byte 'A' at unit 321
// (label 0x41, has_leaf, offset 0x41) -> state 256, whose unit 256 is the leaf with value
// `leaf_value` (an offset into `strings`).
struct Table {
  uint32_t root_offset = 256, a_offset = 0x41, leaf_value = 0;
  std::string strings = std::string("a\0", 2);
};
std::string charsmap(const Table& table) {
  std::vector<uint32_t> units(512, 0);
  units[0] = table.root_offset << 10;
  units[256 ^ 0x41] = (table.a_offset << 10) | 0x100 | 0x41;
  units[256] = (1u << 31) | table.leaf_value;
  std::string blob;
  auto append_u32 = [&](uint32_t value) {
    for (int shift = 0; shift < 32; shift += 8) blob += static_cast<char>((value >> shift) & 0xff);
  };
  append_u32(static_cast<uint32_t>(units.size() * 4));
  for (uint32_t unit : units) append_u32(unit);
  return blob + table.strings;
}

// Pieces <pad> 0, </s> 1, <unk> 2, "\u2581" 3, "a" 4; a unigram model (model_type 1).
std::string unigram_model(const std::string& normalizer_spec) {
  const std::string pieces = piece("<pad>", kControl) + piece("</s>", kControl) + piece("<unk>", kUnknown) +
                             piece("\xe2\x96\x81", kNormal, -1) + piece("a", kNormal, -2);
  return pieces + message_field(2, number_field(3, 1)) + message_field(3, normalizer_spec);
}
std::string table_spec(const Table& table) { return message_field(1, "test") + message_field(2, charsmap(table)); }

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream stream(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(stream), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("A sound SentencePiece normalisation table passes the check and is used", "[models][t5]") {
  const std::string model = unigram_model(table_spec(Table{}));
  CHECK_NOTHROW(check_spiece_model(model, "m.model"));
  const T5Tokenizer tokenizer = T5Tokenizer::from_model_bytes(model, "m.model");
  CHECK(tokenizer.pieces("A") == std::vector<std::string>{"\xe2\x96\x81", "a"});
  CHECK(tokenizer.pad_token_id() == 0);
  CHECK(tokenizer.eos_token_id() == 1);
  CHECK(tokenizer.unk_token_id() == 2);
  CHECK(tokenizer.encode("A b", 6).input_ids == std::vector<int64_t>{3, 4, 3, 2, 1, 0});
}

TEST_CASE("SentencePiece models libsentencepiece would misread are refused", "[models][t5]") {
  auto refused_with = [](const std::string& model, const std::string& problem) {
    INFO(problem);
    CHECK_THROWS_AS(check_spiece_model(model, "m.model"), CorruptDataError);
    CHECK_THROWS_WITH(check_spiece_model(model, "m.model"), Catch::Contains("m.model") && Catch::Contains(problem));
    CHECK_THROWS_WITH(T5Tokenizer::from_model_bytes(model, "m.model"), Catch::Contains(problem));
  };
  Table root_outside;
  root_outside.root_offset = 4096;
  refused_with(unigram_model(table_spec(root_outside)), "root points outside the trie");
  Table transition_outside;
  transition_outside.a_offset = 1024;
  refused_with(unigram_model(table_spec(transition_outside)), "a transition points outside the trie");
  Table leaf_outside;
  leaf_outside.leaf_value = 2;
  refused_with(unigram_model(table_spec(leaf_outside)), "replacement string lies outside");
  Table unterminated;
  unterminated.strings = "a";
  refused_with(unigram_model(table_spec(unterminated)), "replacement string lies outside");
  refused_with(unigram_model(message_field(2, std::string(3, '\0'))), "shorter than its 4-byte header");
  // Cut after the pieces (a field boundary, so it still parses as a protobuf message).
  const std::string whole = unigram_model(table_spec(Table{}));
  refused_with(whole.substr(0, whole.find(message_field(2, number_field(3, 1)))), "no trainer or normalizer spec");
  refused_with(whole.substr(0, whole.size() - 1), "not a well-formed protobuf message");
  refused_with("", "empty");
}

TEST_CASE("The T5 tokenizer fuzz corpus: unigram seeds load, the crash inputs are refused", "[models][t5]") {
  const std::filesystem::path corpus = std::filesystem::path(test::source_dir()) / "fuzz" / "corpus" / "t5_tokenizer";
  REQUIRE(std::filesystem::is_directory(corpus));
  int loaded = 0;
  for (const auto& entry : std::filesystem::directory_iterator(corpus)) {
    const std::string name = entry.path().filename().string();
    INFO(name);
    const std::string bytes = read_bytes(entry.path());
    if (name.rfind("corrupt_", 0) == 0) {
      CHECK_THROWS_AS(T5Tokenizer::from_model_bytes(bytes, name), CorruptDataError);
    } else if (name.rfind("unigram", 0) == 0) {
      const T5Tokenizer tokenizer = T5Tokenizer::from_model_bytes(bytes, name);
      CHECK(tokenizer.encode("a red bench", 8).input_ids.size() == 8);
      ++loaded;
    } else {  // bpe, char: seeds whose mutations reach the unigram path
      CHECK_THROWS_AS(T5Tokenizer::from_model_bytes(bytes, name), UnsupportedError);
    }
  }
  CHECK(loaded >= 1);
}
