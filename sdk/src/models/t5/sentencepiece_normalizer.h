// SentencePiece's text normalisation (normalizer.cc), as encoding runs it before the unigram
// search: the model's precompiled character map (e.g. T5's "nmt_nfkc": NFKC plus control and
// space clean-up) applied by longest-prefix match, user-defined symbols kept verbatim, leading,
// trailing and repeated whitespace removed, a dummy prefix space added and spaces written as
// U+2581 ("▁").
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "models/t5/sentencepiece_model.h"

namespace flashps::sentencepiece {

class Normalizer {
 public:
  // Throws CorruptDataError naming `source_name` when the character map is malformed.
  Normalizer(const NormalizerSpec& spec, bool treat_whitespace_as_suffix, std::vector<std::string> user_defined_symbols,
             const std::string& source_name);

  std::string normalize(std::string_view input) const;

 private:
  // The replacement for the longest rule matching the start of `input` and how many bytes it
  // consumed (a user-defined symbol or one UTF-8 character when no rule matches; U+FFFD for a
  // byte that starts no valid character).
  std::pair<std::string_view, size_t> normalize_prefix(std::string_view input) const;
  // Lengths and values of the charsmap trie's keys that are prefixes of `input`.
  size_t longest_rule(std::string_view input, uint32_t* value) const;

  NormalizerSpec spec_;
  bool treat_whitespace_as_suffix_ = false;
  std::vector<std::string> user_defined_symbols_;
  std::vector<uint32_t> trie_units_;  // Darts-clone double array
  std::string_view replacements_;     // NUL-terminated strings the trie's values index
};

// Byte length of the valid UTF-8 character at the start of `text`, or 0 when it is not one
// (overlong forms, surrogates and code points past U+10FFFF are invalid, as in SentencePiece).
size_t valid_utf8_length(std::string_view text);

}  // namespace flashps::sentencepiece
