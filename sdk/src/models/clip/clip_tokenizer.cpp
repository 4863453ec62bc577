#include "models/clip/clip_tokenizer.h"

#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"

namespace flashps {
namespace {

const std::string kStart = "<|startoftext|>", kEnd = "<|endoftext|>";

std::string utf8(UChar32 c) {
  std::string out;
  icu::UnicodeString(c).toUTF8String(out);
  return out;
}

bool is_letter(UChar32 c) {
  switch (u_charType(c)) {
    case U_UPPERCASE_LETTER: case U_LOWERCASE_LETTER: case U_TITLECASE_LETTER:
    case U_MODIFIER_LETTER: case U_OTHER_LETTER: return true;
    default: return false;
  }
}

bool is_number(UChar32 c) {
  const int8_t type = u_charType(c);
  return type == U_DECIMAL_DIGIT_NUMBER || type == U_LETTER_NUMBER || type == U_OTHER_NUMBER;
}

// Python's str.isspace(), which `\s` and str.strip() follow.
bool is_space(UChar32 c) { return u_isUWhiteSpace(c) || (c >= 0x1c && c <= 0x1f); }

// ftfy's fixes that change ids of typed prompts (see the header).
icu::UnicodeString fix_text(const icu::UnicodeString& text) {
  icu::UnicodeString out;
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfkc = icu::Normalizer2::getNFKCInstance(status);
  for (int32_t i = 0; i < text.length();) {
    const UChar32 c = text.char32At(i);
    i += U16_LENGTH(c);
    switch (c) {
      case 0x2018: case 0x2019: case 0x201A: case 0x201B: out.append(UChar32('\'')); continue;
      case 0x201C: case 0x201D: case 0x201E: case 0x201F: out.append(UChar32('"')); continue;
      case 0x0132: out.append("IJ"); continue;
      case 0x0133: out.append("ij"); continue;
      case 0x0149: out.append(icu::UnicodeString::fromUTF8("\u02BCn")); continue;
      case 0x01F1: out.append("DZ"); continue;
      case 0x01F2: out.append("Dz"); continue;
      case 0x01F3: out.append("dz"); continue;
      case 0x01C4: out.append(icu::UnicodeString::fromUTF8("D\u017D")); continue;
      case 0x01C5: out.append(icu::UnicodeString::fromUTF8("D\u017E")); continue;
      case 0x01C6: out.append(icu::UnicodeString::fromUTF8("d\u017E")); continue;
      case 0x01C7: out.append("LJ"); continue;
      case 0x01C8: out.append("Lj"); continue;
      case 0x01C9: out.append("lj"); continue;
      case 0x01CA: out.append("NJ"); continue;
      case 0x01CB: out.append("Nj"); continue;
      case 0x01CC: out.append("nj"); continue;
      case 0xFB00: out.append("ff"); continue;
      case 0xFB01: out.append("fi"); continue;
      case 0xFB02: out.append("fl"); continue;
      case 0xFB03: out.append("ffi"); continue;
      case 0xFB04: out.append("ffl"); continue;
      case 0xFB05: out.append(icu::UnicodeString::fromUTF8("\u017Ft")); continue;
      case 0xFB06: out.append("st"); continue;
      default: break;
    }
    if (U_SUCCESS(status) && (c == 0x3000 || (c >= 0xFF01 && c <= 0xFFEE))) {  // character width
      UErrorCode error = U_ZERO_ERROR;
      icu::UnicodeString narrowed = nfkc->normalize(icu::UnicodeString(c), error);
      out.append(U_SUCCESS(error) ? narrowed : icu::UnicodeString(c));
      continue;
    }
    out.append(c);
  }
  UErrorCode error = U_ZERO_ERROR;
  const icu::Normalizer2* nfc = icu::Normalizer2::getNFCInstance(error);
  if (U_FAILURE(error)) return out;
  icu::UnicodeString composed = nfc->normalize(out, error);
  return U_SUCCESS(error) ? composed : out;
}

// Python's html.unescape for numeric references and the named ones prompts use.
std::string html_unescape(const std::string& text) {
  static const std::map<std::string, std::string> named = {
      {"amp", "&"},   {"lt", "<"},      {"gt", ">"},      {"quot", "\""},   {"apos", "'"},
      {"nbsp", "\u00A0"}, {"copy", "\u00A9"}, {"reg", "\u00AE"}, {"trade", "\u2122"}, {"hellip", "\u2026"},
      {"mdash", "\u2014"}, {"ndash", "\u2013"}, {"lsquo", "\u2018"}, {"rsquo", "\u2019"}, {"ldquo", "\u201C"},
      {"rdquo", "\u201D"}, {"deg", "\u00B0"}, {"times", "\u00D7"}, {"eacute", "\u00E9"}, {"euro", "\u20AC"}};
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (text[i] != '&') {
      out += text[i++];
      continue;
    }
    const size_t end = text.find(';', i);
    if (end != std::string::npos && end - i <= 32) {
      const std::string name = text.substr(i + 1, end - i - 1);
      if (name.size() > 1 && name[0] == '#') {
        const bool hex = name[1] == 'x' || name[1] == 'X';
        const std::string digits = name.substr(hex ? 2 : 1);
        bool valid = !digits.empty() && digits.size() <= 8;
        for (char d : digits) valid &= hex ? std::isxdigit(static_cast<unsigned char>(d)) != 0 : std::isdigit(static_cast<unsigned char>(d)) != 0;
        if (valid) {
          const long code = std::stol(digits, nullptr, hex ? 16 : 10);
          // Python maps invalid code points to U+FFFD.
          out += utf8(code > 0 && code <= 0x10FFFF && !(code >= 0xD800 && code <= 0xDFFF) ? UChar32(code) : 0xFFFD);
          i = end + 1;
          continue;
        }
      } else if (auto found = named.find(name); found != named.end()) {
        out += found->second;
        i = end + 1;
        continue;
      }
    }
    out += text[i++];
  }
  return out;
}

// GPT-2's reversible byte -> printable character map.
const std::vector<std::string>& byte_symbols() {
  static const std::vector<std::string> symbols = [] {
    std::vector<std::string> table(256);
    std::vector<bool> printable(256, false);
    for (int b = '!'; b <= '~'; ++b) printable[b] = true;
    for (int b = 0xA1; b <= 0xAC; ++b) printable[b] = true;
    for (int b = 0xAE; b <= 0xFF; ++b) printable[b] = true;
    int extra = 0;
    for (int b = 0; b < 256; ++b) table[b] = utf8(printable[b] ? b : 256 + extra++);
    return table;
  }();
  return symbols;
}

// OpenAI's pre-tokenisation regex, matched left to right:
//   <|startoftext|>|<|endoftext|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+
std::vector<std::string> pre_tokenize(const icu::UnicodeString& text) {
  std::vector<std::string> pieces;
  const icu::UnicodeString start = icu::UnicodeString::fromUTF8(kStart), end = icu::UnicodeString::fromUTF8(kEnd);
  for (int32_t i = 0; i < text.length();) {
    const UChar32 c = text.char32At(i);
    int32_t j = i;
    if (text.compare(i, start.length(), start) == 0) {
      j = i + start.length();
    } else if (text.compare(i, end.length(), end) == 0) {
      j = i + end.length();
    } else if (c == '\'' && i + 1 < text.length() &&
               (text[i + 1] == 's' || text[i + 1] == 't' || text[i + 1] == 'm' || text[i + 1] == 'd')) {
      j = i + 2;
    } else if (c == '\'' && i + 2 < text.length() &&
               ((text[i + 1] == 'r' && text[i + 2] == 'e') || (text[i + 1] == 'v' && text[i + 2] == 'e') ||
                (text[i + 1] == 'l' && text[i + 2] == 'l'))) {
      j = i + 3;
    } else if (is_letter(c)) {
      while (j < text.length() && is_letter(text.char32At(j))) j += U16_LENGTH(text.char32At(j));
    } else if (is_number(c)) {
      j += U16_LENGTH(c);
    } else if (is_space(c)) {
      i += U16_LENGTH(c);
      continue;
    } else {
      while (j < text.length()) {
        const UChar32 next = text.char32At(j);
        if (is_space(next) || is_letter(next) || is_number(next)) break;
        j += U16_LENGTH(next);
      }
    }
    std::string piece;
    text.tempSubStringBetween(i, j).toUTF8String(piece);
    pieces.push_back(std::move(piece));
    i = j;
  }
  return pieces;
}

}  // namespace

ClipTokenizer::ClipTokenizer(std::unordered_map<std::string, int64_t> vocab,
                             std::vector<std::pair<std::string, std::string>> merges, int64_t pad_token_id)
    : vocab_(std::move(vocab)), pad_(pad_token_id) {
  for (size_t rank = 0; rank < merges.size(); ++rank)
    merge_ranks_.emplace(merges[rank].first + " " + merges[rank].second, static_cast<int>(rank));
  auto special = [&](const std::string& token) {
    auto found = vocab_.find(token);
    if (found == vocab_.end()) throw Error("CLIP vocabulary has no " + token + " token");
    return found->second;
  };
  bos_ = special(kStart);
  eos_ = special(kEnd);
}

ClipTokenizer ClipTokenizer::load(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path vocab_path = fs::path(dir) / "vocab.json", merges_path = fs::path(dir) / "merges.txt";
  if (!fs::exists(vocab_path)) throw Error(dir + ": CLIP tokenizer folder has no vocab.json");
  if (!fs::exists(merges_path)) throw Error(dir + ": CLIP tokenizer folder has no merges.txt");
  const nlohmann::json vocab_json = read_json_file(vocab_path.string());
  if (!vocab_json.is_object() || vocab_json.empty()) throw Error(vocab_path.string() + ": not a token -> id object");
  std::unordered_map<std::string, int64_t> vocab;
  for (const auto& [token, id] : vocab_json.items()) {
    if (!id.is_number_integer()) throw Error(vocab_path.string() + ": id of \"" + token + "\" is not an integer");
    vocab.emplace(token, id.get<int64_t>());
  }
  std::ifstream merges_file(merges_path);
  if (!merges_file) throw Error(merges_path.string() + ": cannot read");
  std::vector<std::pair<std::string, std::string>> merges;
  std::string line;
  int number = 0;
  while (std::getline(merges_file, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || (number == 1 && line.rfind("#version", 0) == 0)) continue;
    const size_t space = line.find(' ');
    if (space == std::string::npos || space == 0 || space + 1 >= line.size() || line.find(' ', space + 1) != std::string::npos)
      throw Error(merges_path.string() + ":" + std::to_string(number) + ": expected two symbols separated by a space");
    merges.emplace_back(line.substr(0, space), line.substr(space + 1));
  }
  int64_t pad = -1;
  const fs::path config_path = fs::path(dir) / "tokenizer_config.json";
  if (fs::exists(config_path)) {
    const nlohmann::json config = read_json_file(config_path.string());
    auto pad_token = config.find("pad_token");
    std::string pad_text;
    if (pad_token != config.end() && pad_token->is_string()) pad_text = pad_token->get<std::string>();
    else if (pad_token != config.end() && pad_token->is_object()) pad_text = pad_token->value("content", std::string());
    if (!pad_text.empty()) {
      auto found = vocab.find(pad_text);
      if (found == vocab.end()) throw Error(config_path.string() + ": pad_token \"" + pad_text + "\" is not in vocab.json");
      pad = found->second;
    }
  }
  ClipTokenizer tokenizer(std::move(vocab), std::move(merges), 0);
  tokenizer.pad_ = pad >= 0 ? pad : tokenizer.eos_;
  return tokenizer;
}

std::string ClipTokenizer::clean(const std::string& text) const {
  icu::UnicodeString fixed = fix_text(icu::UnicodeString::fromUTF8(text));
  std::string step;
  fixed.toUTF8String(step);
  step = html_unescape(html_unescape(step));
  // Collapse whitespace runs to one space, strip, lowercase.
  const icu::UnicodeString unescaped = icu::UnicodeString::fromUTF8(step);
  icu::UnicodeString collapsed;
  bool pending_space = false;
  for (int32_t i = 0; i < unescaped.length();) {
    const UChar32 c = unescaped.char32At(i);
    i += U16_LENGTH(c);
    if (is_space(c)) {
      pending_space = collapsed.length() > 0;
      continue;
    }
    if (pending_space) collapsed.append(UChar32(' '));
    pending_space = false;
    collapsed.append(c);
  }
  collapsed.toLower(icu::Locale::getRoot());
  std::string out;
  collapsed.toUTF8String(out);
  return out;
}

std::vector<std::string> ClipTokenizer::bpe(const std::string& piece) const {
  if (piece == kStart || piece == kEnd) return {piece};
  std::vector<std::string> word;
  for (unsigned char byte : piece) word.push_back(byte_symbols()[byte]);
  if (word.empty()) return {};
  word.back() += "</w>";
  while (word.size() > 1) {
    int best_rank = std::numeric_limits<int>::max();
    size_t best = 0;
    for (size_t i = 0; i + 1 < word.size(); ++i) {
      auto found = merge_ranks_.find(word[i] + " " + word[i + 1]);
      if (found != merge_ranks_.end() && found->second < best_rank) {
        best_rank = found->second;
        best = i;
      }
    }
    if (best_rank == std::numeric_limits<int>::max()) break;
    const std::string first = word[best], second = word[best + 1];
    std::vector<std::string> merged;
    for (size_t i = 0; i < word.size();) {
      if (i + 1 < word.size() && word[i] == first && word[i + 1] == second) {
        merged.push_back(first + second);
        i += 2;
      } else {
        merged.push_back(word[i++]);
      }
    }
    word = std::move(merged);
  }
  return word;
}

std::vector<std::string> ClipTokenizer::bpe_tokens(const std::string& text) const {
  std::vector<std::string> tokens;
  for (const std::string& piece : pre_tokenize(icu::UnicodeString::fromUTF8(clean(text))))
    for (std::string& token : bpe(piece)) tokens.push_back(std::move(token));
  return tokens;
}

std::vector<int64_t> ClipTokenizer::encode(const std::string& text) const {
  std::vector<int64_t> ids;
  for (const std::string& token : bpe_tokens(text)) {
    auto found = vocab_.find(token);
    if (found == vocab_.end()) throw Error("CLIP tokenizer: BPE token \"" + token + "\" is not in the vocabulary");
    ids.push_back(found->second);
  }
  return ids;
}

TokenizedPrompt ClipTokenizer::tokenize(const std::string& text, int max_length) const {
  return tokenize(text, max_length, pad_);
}

TokenizedPrompt ClipTokenizer::tokenize(const std::string& text, int max_length, int64_t pad_token_id) const {
  if (max_length < 2) throw Error("CLIP tokenizer: max_length must be at least 2");
  TokenizedPrompt prompt;
  prompt.ids = encode(text);
  const size_t room = static_cast<size_t>(max_length - 2);
  prompt.truncated = prompt.ids.size() > room;
  prompt.input_ids.push_back(bos_);
  prompt.input_ids.insert(prompt.input_ids.end(), prompt.ids.begin(), prompt.ids.begin() + std::min(room, prompt.ids.size()));
  prompt.input_ids.push_back(eos_);
  prompt.input_ids.resize(static_cast<size_t>(max_length), pad_token_id);
  return prompt;
}

}  // namespace flashps
