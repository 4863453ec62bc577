// Differential test of the SDK's SentencePiece unigram encoder (sdk/src/models/t5/) against
// libsentencepiece itself, the reference. This program links libsentencepiece and not LibTorch:
// Debian's libsentencepiece exports the protobuf it bundles, which crashes a process that also
// loads LibTorch's libprotobuf (why the SDK has its own reader).
//
// Models: ones trained here with the library's trainer (T5's nmt_nfkc normalisation; byte
// fallback; user-defined symbols with the whitespace options off), every spiece.model under
// FLASHPS_FIXTURES_DIR (or ../shared/fixtures), and FLASHPS_T5_SPIECE (a real T5 model) when set.
// Texts: the fixture prompts and thousands of random strings drawn from letters, digits, spaces,
// tabs, newlines, full-width and ligature forms, accents (composed and combining), emoji,
// control characters and malformed UTF-8. Exit 0: all agree; 1: the first disagreement, printed.
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "models/t5/sentencepiece_model.h"
#include "models/t5/sentencepiece_normalizer.h"
#include "models/t5/unigram_encoder.h"

namespace fs = std::filesystem;
namespace ours = flashps::sentencepiece;

namespace {

const std::vector<std::string> kFragments = {
    "a", "red", "bench", "in", "the", "park", "Mountains", "at", "sunset", "UPPER", "MiXeD", "12345", "3.14159",
    " ", " ", " ", "  ", "\t", "\n", "\r\n", ",", ".", "!?", "(", ")", "[", "]", "\"", "'", "-", "_",
    "\xef\xbd\x86\xef\xbd\x95\xef\xbd\x8c\xef\xbd\x8c",  // full-width "full"
    "\xef\xbc\x8d",                                      // full-width hyphen
    "\xef\xac\x81", "\xef\xac\x82",                      // ligatures fi, fl
    "caf\xc3\xa9", "cafe\xcc\x81", "na\xc3\xafve",       // composed and combining accents
    "\xf0\x9f\x99\x82", "\xe2\x98\x95",                  // emoji
    "\xe3\x80\x80",                                      // ideographic space
    "\xe2\x80\x8b",                                      // zero-width space
    "\xc2\xa0",                                          // no-break space
    "\x01", "\x7f",                                      // control characters
    "\xe6\x97\xa5\xe6\x9c\xac",                          // CJK
    "\xc3\x28", "\xe2\x82", "\xf0\x9f", "\xff", "\xed\xa0\x80",  // malformed UTF-8
    "<cat>", "[X]", "</s>", "<pad>",
};

std::string read_file(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

std::string escaped(const std::string& text) {
  std::string out;
  for (const unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  return out;
}

std::string joined(const std::vector<std::pair<std::string, int>>& pieces) {
  std::string out;
  for (const auto& [text, id] : pieces) out += "[" + escaped(text) + " " + std::to_string(id) + "]";
  return out;
}

// A corpus for the trainer: sentences of English-like words, digits and punctuation.
fs::path write_corpus(const fs::path& dir) {
  const std::vector<std::string> words = {"a", "red", "bench", "in", "the", "park", "photo", "of", "cat", "wearing",
                                          "sunglasses", "highly", "detailed", "remove", "person", "on", "left",
                                          "snow", "covered", "mountains", "at", "sunset", "golden", "hour",
                                          "lighting", "bowl", "figs", "concrete", "floor", "with", "long", "shadow",
                                          "caf\xc3\xa9", "na\xc3\xafve", "4k", "2024", "3.14", "<cat>", "[X]"};
  std::mt19937 random(11);
  const fs::path corpus = dir / "corpus.txt";
  std::ofstream out(corpus);
  for (int line = 0; line < 3000; ++line) {
    const int length = 3 + static_cast<int>(random() % 10);
    for (int w = 0; w < length; ++w) out << (w ? " " : "") << words[random() % words.size()];
    out << (random() % 3 == 0 ? ".\n" : "\n");
  }
  return corpus;
}

std::string train(const fs::path& dir, const std::string& name, const std::string& options, int vocab_size = 200) {
  const fs::path prefix = dir / name;
  const std::string args = "--input=" + (dir / "corpus.txt").string() + " --model_prefix=" + prefix.string() +
                           " --model_type=unigram --vocab_size=" + std::to_string(vocab_size) + " --hard_vocab_limit=false --num_threads=1 --minloglevel=2 " + options;
  const auto status = sentencepiece::SentencePieceTrainer::Train(args);
  if (!status.ok()) {
    std::fprintf(stderr, "training %s failed: %s\n", name.c_str(), status.ToString().c_str());
    std::exit(2);
  }
  return prefix.string() + ".model";
}

std::vector<std::string> random_texts(int count, uint32_t seed) {
  std::mt19937 random(seed);
  std::vector<std::string> texts = {"", " ", "  leading and trailing spaces  ", "tabs\tand\nnewlines"};
  for (int i = 0; i < count; ++i) {
    std::string text;
    const int parts = static_cast<int>(random() % 12);
    for (int p = 0; p < parts; ++p) text += kFragments[random() % kFragments.size()];
    texts.push_back(text);
  }
  return texts;
}

// Compares every text on one model; returns the number of disagreements (printing the first few).
int compare(const std::string& model_path, const std::vector<std::string>& texts) {
  sentencepiece::SentencePieceProcessor reference;
  if (!reference.Load(model_path).ok()) {
    std::fprintf(stderr, "%s: libsentencepiece cannot load it\n", model_path.c_str());
    return 1;
  }
  const std::string bytes = read_file(model_path);
  const ours::ModelProto proto = ours::parse_model_proto(bytes, model_path);
  const ours::UnigramEncoder encoder(proto, model_path);
  const ours::Normalizer normalizer(proto.normalizer, proto.trainer.treat_whitespace_as_suffix,
                                    encoder.user_defined_symbols(), model_path);
  if (encoder.vocab_size() != reference.GetPieceSize()) {
    std::fprintf(stderr, "%s: vocabulary %d, reference %d\n", model_path.c_str(), encoder.vocab_size(),
                 reference.GetPieceSize());
    return 1;
  }
  int disagreements = 0;
  for (const std::string& text : texts) {
    std::vector<std::pair<std::string, int>> expected, actual;
    std::vector<std::string> reference_pieces;
    std::vector<int> reference_ids;
    if (!reference.Encode(text, &reference_pieces).ok() || !reference.Encode(text, &reference_ids).ok() ||
        reference_pieces.size() != reference_ids.size())
      continue;  // the reference refuses it: nothing to compare
    for (size_t i = 0; i < reference_ids.size(); ++i) expected.emplace_back(reference_pieces[i], reference_ids[i]);
    for (auto& piece : encoder.encode(normalizer.normalize(text))) actual.emplace_back(piece.text, piece.id);
    // The reference reports an unknown run by its original surface; compare unknowns by id only.
    for (auto* pieces : {&expected, &actual})
      for (auto& [piece_text, id] : *pieces)
        if (id == encoder.unknown_id()) piece_text = "<unk>";
    if (expected != actual && ++disagreements <= 3)
      std::fprintf(stderr, "%s: text \"%s\"\n  reference %s\n  ours      %s\n", model_path.c_str(),
                   escaped(text).c_str(), joined(expected).c_str(), joined(actual).c_str());
  }
  std::printf("%s: %zu texts, %d disagreements\n", model_path.c_str(), texts.size(), disagreements);
  return disagreements;
}

}  // namespace

int main() {
  const fs::path dir = fs::temp_directory_path() / ("flashps-spm-diff-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_corpus(dir);
  std::vector<std::string> models = {
      train(dir, "nfkc", "--normalization_rule_name=nmt_nfkc"),
      train(dir, "byte_fallback", "--normalization_rule_name=nmt_nfkc --byte_fallback=true", 400),
      train(dir, "user_symbols",
            "--normalization_rule_name=nfkc_cf --user_defined_symbols=<cat>,[X] --add_dummy_prefix=false "
            "--remove_extra_whitespaces=false"),
      train(dir, "identity_suffix", "--normalization_rule_name=identity --treat_whitespace_as_suffix=true"),
  };
  const char* fixtures_env = std::getenv("FLASHPS_FIXTURES_DIR");
  const fs::path fixtures = fixtures_env ? fs::path(fixtures_env) : fs::path(FLASHPS_SOURCE_DIR) / "../shared/fixtures";
  std::vector<std::string> texts = random_texts(3000, 5);
  if (fs::is_directory(fixtures)) {
    for (const auto& entry : fs::recursive_directory_iterator(fixtures))
      if (entry.path().filename() == "spiece.model") models.push_back(entry.path().string());
  } else {
    std::printf("no fixtures at %s: comparing on trained models only\n", fixtures.string().c_str());
  }
  if (const char* real = std::getenv("FLASHPS_T5_SPIECE")) models.push_back(real);
  int disagreements = 0;
  for (const std::string& model : models) disagreements += compare(model, texts);
  fs::remove_all(dir);
  return disagreements == 0 ? 0 : 1;
}
