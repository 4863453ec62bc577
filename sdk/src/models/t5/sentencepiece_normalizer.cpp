#include "models/t5/sentencepiece_normalizer.h"

#include <algorithm>
#include <cstring>

#include "core/diagnostics/error.h"

namespace flashps::sentencepiece {
namespace {

constexpr std::string_view kSpaceSymbol = "\xe2\x96\x81";  // U+2581
constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";

// Darts-clone's unit layout: a label byte, a leaf flag, and an offset to the children.
bool has_leaf(uint32_t unit) { return (unit >> 8) & 1; }
uint32_t unit_value(uint32_t unit) { return unit & ((1u << 31) - 1); }
uint32_t unit_label(uint32_t unit) { return unit & ((1u << 31) | 0xFF); }
uint32_t unit_offset(uint32_t unit) { return (unit >> 10) << ((unit & (1u << 9)) >> 6); }

bool ends_with(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

size_t valid_utf8_length(std::string_view text) {
  if (text.empty()) return 0;
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  const uint8_t first = byte(0);
  if (first < 0x80) return 1;
  size_t length = 0;
  uint32_t code = 0;
  if ((first & 0xE0) == 0xC0) length = 2, code = first & 0x1F;
  else if ((first & 0xF0) == 0xE0) length = 3, code = first & 0x0F;
  else if ((first & 0xF8) == 0xF0) length = 4, code = first & 0x07;
  else return 0;
  if (text.size() < length) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i) & 0x3F);
  }
  static constexpr uint32_t kSmallest[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < kSmallest[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return length;
}

Normalizer::Normalizer(const NormalizerSpec& spec, bool treat_whitespace_as_suffix,
                       std::vector<std::string> user_defined_symbols, const std::string& source_name)
    : spec_(spec), treat_whitespace_as_suffix_(treat_whitespace_as_suffix),
      user_defined_symbols_(std::move(user_defined_symbols)) {
  const std::string& blob = spec_.precompiled_charsmap;
  if (blob.empty()) return;
  uint32_t trie_bytes = 0;
  if (blob.size() <= sizeof trie_bytes)
    throw CorruptDataError(source_name + ": the normalizer's character map is truncated");
  std::memcpy(&trie_bytes, blob.data(), sizeof trie_bytes);  // little-endian on every supported host
  if (trie_bytes >= blob.size() - sizeof trie_bytes || trie_bytes % 4 != 0 || trie_bytes == 0)
    throw CorruptDataError(source_name + ": the normalizer's character map declares a trie of " +
                           std::to_string(trie_bytes) + " bytes in a map of " + std::to_string(blob.size()));
  trie_units_.resize(trie_bytes / 4);
  std::memcpy(trie_units_.data(), blob.data() + sizeof trie_bytes, trie_bytes);
  replacements_ = std::string_view(spec_.precompiled_charsmap).substr(sizeof trie_bytes + trie_bytes);
}

size_t Normalizer::longest_rule(std::string_view input, uint32_t* value) const {
  // Darts-clone commonPrefixSearch: walk the double array byte by byte; every node with a leaf
  // ends a key. Positions come from the (untrusted) file, so each is bounds-checked.
  size_t longest = 0;
  const size_t units = trie_units_.size();
  size_t node = unit_offset(trie_units_[0]);
  for (size_t i = 0; i < input.size(); ++i) {
    const uint8_t label = static_cast<uint8_t>(input[i]);
    node ^= label;
    if (node >= units) break;
    const uint32_t unit = trie_units_[node];
    if (unit_label(unit) != label) break;
    node ^= unit_offset(unit);
    if (node >= units) break;
    if (has_leaf(unit)) {
      longest = i + 1;
      *value = unit_value(trie_units_[node]);
    }
  }
  return longest;
}

std::pair<std::string_view, size_t> Normalizer::normalize_prefix(std::string_view input) const {
  size_t longest_symbol = 0;  // user-defined symbols are never normalised
  for (const std::string& symbol : user_defined_symbols_)
    if (symbol.size() > longest_symbol && input.substr(0, symbol.size()) == symbol) longest_symbol = symbol.size();
  if (longest_symbol > 0) return {input.substr(0, longest_symbol), longest_symbol};

  uint32_t value = 0;
  const size_t matched = trie_units_.empty() ? 0 : longest_rule(input, &value);
  if (matched > 0) {
    if (value >= replacements_.size()) return {std::string_view(), matched};  // a value past the strings: drop
    const std::string_view rest = replacements_.substr(value);
    return {rest.substr(0, std::min(rest.find('\0'), rest.size())), matched};
  }
  const size_t length = valid_utf8_length(input);
  if (length == 0) return {kReplacementCharacter, 1};
  return {input.substr(0, length), length};
}

std::string Normalizer::normalize(std::string_view input) const {
  std::string normalized;
  if (spec_.remove_extra_whitespaces) {
    while (!input.empty()) {
      const auto [replacement, consumed] = normalize_prefix(input);
      if (replacement != " ") break;
      input.remove_prefix(consumed);
    }
  }
  if (input.empty()) return normalized;
  normalized.reserve(input.size() * 3);
  const std::string_view space = spec_.escape_whitespaces ? kSpaceSymbol : std::string_view(" ");
  if (!treat_whitespace_as_suffix_ && spec_.add_dummy_prefix) normalized += space;

  bool previous_was_space = spec_.remove_extra_whitespaces;
  while (!input.empty()) {
    auto [replacement, consumed] = normalize_prefix(input);
    while (previous_was_space && !replacement.empty() && replacement.front() == ' ') replacement.remove_prefix(1);
    if (!replacement.empty()) {
      for (const char c : replacement) {
        if (spec_.escape_whitespaces && c == ' ') normalized += kSpaceSymbol;
        else normalized += c;
      }
      previous_was_space = replacement.back() == ' ';
    }
    input.remove_prefix(consumed);
    if (!spec_.remove_extra_whitespaces) previous_was_space = false;
  }
  if (spec_.remove_extra_whitespaces)
    while (ends_with(normalized, space)) normalized.resize(normalized.size() - space.size());
  if (treat_whitespace_as_suffix_ && spec_.add_dummy_prefix) normalized += space;
  return normalized;
}

}  // namespace flashps::sentencepiece
