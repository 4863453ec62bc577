// The T5 tokenizer of Flux pipelines (`tokenizer_2`): Hugging Face's T5Tokenizer (the slow,
// legacy=True one) over a SentencePiece unigram model, reading tokenizer_2/spiece.model with the
// SDK's own reader, normaliser and encoder (sentencepiece_model.h, sentencepiece_normalizer.h,
// unigram_encoder.h: Debian's libsentencepiece cannot share a process with LibTorch).
//
// Text is what SentencePiece's Encode makes of it (the model's normalisation, T5: NFKC; leading,
// trailing and repeated whitespace removed), as the slow tokenizer does. Known differences from
// Hugging Face:
//   * a special token written in the text ("</s>", "<extra_id_0>") is plain text here, where
//     Hugging Face splits it out as that token; prompts do not contain them;
//   * malformed UTF-8 (which Python strings cannot hold) is accepted: each byte of a malformed
//     sequence becomes U+FFFD, as in SentencePiece;
//   * tokenizer_config.json's "legacy": false (a different handling of text after special tokens
//     and of leading spaces) is not implemented: this is always the legacy behaviour.
// The fast tokenizer (T5TokenizerFast) can differ from both on leading and repeated whitespace;
// the golden fixture (../shared/fixtures/t5_tokenizer) follows SentencePiece.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace flashps {

// The special tokens by piece text, as tokenizer_config.json names them. An empty name means the
// model's own: its unknown piece, and the trainer spec's eos/pad control pieces (T5: pad 0, eos 1,
// unk 2).
struct T5SpecialTokens {
  std::string eos, pad, unk;
};

class T5Tokenizer {
 public:
  // Longest sequence encode() accepts: far above T5's 512, low enough to bound the output.
  static constexpr int kMaxLength = 1 << 16;

  // Reads spiece.model and the special tokens of tokenizer_config.json (else
  // special_tokens_map.json) beside it, when present. Throws NotFoundError (no file), IoError
  // (unreadable), CorruptDataError (not a SentencePiece model, a special token it lacks) or
  // UnsupportedError (not a unigram model), each naming the file.
  static T5Tokenizer load(const std::string& spiece_model_path);
  // The same from the bytes of a spiece.model; `source_name` names them in errors.
  static T5Tokenizer from_model_bytes(const std::string& model_bytes, const std::string& source_name,
                                      const T5SpecialTokens& special_tokens = {});

  struct Encoded {
    std::vector<int64_t> input_ids;       // max_length ids: ids(text)[:max_length-1], eos, pad...
    std::vector<int64_t> attention_mask;  // 1 for the text's ids and eos, 0 for padding
    bool truncated = false;               // ids(text) did not fit before the eos
  };
  // What FluxPipeline's tokenizer_2(text, padding="max_length", max_length, truncation=True)
  // returns. max_length must be in 1..kMaxLength (InvalidArgumentError).
  Encoded encode(const std::string& text, int max_length) const;

  std::vector<std::string> pieces(const std::string& text) const;  // SentencePiece pieces, all
  std::vector<int64_t> ids(const std::string& text) const;         // their ids, no eos

  int64_t vocab_size() const;
  int64_t eos_token_id() const;
  int64_t pad_token_id() const;
  int64_t unk_token_id() const;

 private:
  struct Impl;
  explicit T5Tokenizer(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;  // immutable after loading: copies share it
};

}  // namespace flashps
