// libFuzzer target for the T5 tokenizer (Flux's tokenizer_2): any bytes given as a spiece.model
// must load or throw flashps::Error, and a loaded tokenizer must encode a few prompts (and the
// input itself as text) into max_length ids within its vocabulary, or throw flashps::Error; a
// crash, leak or sanitizer report is a bug. Seeds (fuzz/corpus/t5_tokenizer/): tiny models made
// with SentencePiece's trainer: unigram with a normalisation rule table, bpe, char, and unigram
// with byte fallback and a user-defined symbol (bpe and char are refused, but their mutations
// reach the unigram path), and a normalisation table that crashed libsentencepiece.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "core/diagnostics/error.h"
#include "models/t5/t5_tokenizer.h"

namespace {

constexpr int kMaxLength = 16;

void check_encoding(const flashps::T5Tokenizer& tokenizer, const std::string& text) {
  const flashps::T5Tokenizer::Encoded encoded = tokenizer.encode(text, kMaxLength);
  if (encoded.input_ids.size() != kMaxLength || encoded.attention_mask.size() != kMaxLength) std::abort();
  for (int64_t id : encoded.input_ids)
    if (id < 0 || id >= tokenizer.vocab_size()) std::abort();
  if (encoded.attention_mask.front() != 1) std::abort();  // the eos at least
  const size_t pieces = tokenizer.pieces(text).size();
  if (tokenizer.ids(text).size() != pieces) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  std::optional<flashps::T5Tokenizer> tokenizer;
  try {
    tokenizer.emplace(flashps::T5Tokenizer::from_model_bytes(bytes, "fuzz.model"));
  } catch (const flashps::Error&) {
    return 0;  // rejected cleanly
  }
  const std::string texts[] = {"a photo of a cat, 4k", "", "  \xef\xbd\x86\xef\xbd\x95ll \xef\xac\x81ne\tcaf\xc3\xa9 \xf0\x9f\x99\x82 ",
                               "broken \xff\xe2\x82 utf-8", "</s> <pad> <unk> <extra_id_0>", bytes.substr(0, 256)};
  for (const std::string& text : texts) {
    try {
      check_encoding(*tokenizer, text);
    } catch (const flashps::Error&) {
      // An encoding error is a clean answer.
    }
  }
  return 0;
}
