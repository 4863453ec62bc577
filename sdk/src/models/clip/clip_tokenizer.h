// The CLIP BPE tokenizer (OpenAI clip/simple_tokenizer.py, HF CLIPTokenizer) reading a diffusers
// tokenizer/ folder: vocab.json + merges.txt (+ tokenizer_config.json for the pad token).
//
// Text clean-up follows OpenAI: ftfy.fix_text, HTML unescaped twice, whitespace collapsed,
// lowercased (full Unicode case mapping). Of ftfy, the fixes that change token ids of real
// prompts are implemented: curly quotes uncurled, Latin ligatures expanded, full-width
// characters narrowed, NFC composition (mojibake repair is not: prompts typed by users do not
// contain it). Pre-tokenisation is OpenAI's regex with Unicode letter/number classes (ICU).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace flashps {

struct TokenizedPrompt {
  std::vector<int64_t> ids;        // BPE ids without start/end tokens
  std::vector<int64_t> input_ids;  // [bos] + ids[:max-2] + [eos], padded to max_length
  bool truncated = false;          // ids did not fit
};

class ClipTokenizer {
 public:
  // Reads <dir>/vocab.json and <dir>/merges.txt; the pad token from tokenizer_config.json
  // ("pad_token": "<|endoftext|>" for SD1.x, "!" for SD2.x), else <|endoftext|>. Throws Error
  // naming the missing or malformed file.
  static ClipTokenizer load(const std::string& dir);
  ClipTokenizer(std::unordered_map<std::string, int64_t> vocab, std::vector<std::pair<std::string, std::string>> merges,
                int64_t pad_token_id);

  std::string clean(const std::string& text) const;              // the string BPE runs on
  std::vector<std::string> bpe_tokens(const std::string& text) const;  // BPE strings of clean(text)
  std::vector<int64_t> encode(const std::string& text) const;     // ids, no start/end
  TokenizedPrompt tokenize(const std::string& text, int max_length = 77) const;
  TokenizedPrompt tokenize(const std::string& text, int max_length, int64_t pad_token_id) const;

  int64_t bos_token_id() const { return bos_; }
  int64_t eos_token_id() const { return eos_; }
  int64_t pad_token_id() const { return pad_; }
  size_t vocab_size() const { return vocab_.size(); }

 private:
  std::vector<std::string> bpe(const std::string& word) const;

  std::unordered_map<std::string, int64_t> vocab_;
  std::unordered_map<std::string, int> merge_ranks_;  // "a b" -> rank
  int64_t bos_ = 49406, eos_ = 49407, pad_ = 49407;
};

}  // namespace flashps
