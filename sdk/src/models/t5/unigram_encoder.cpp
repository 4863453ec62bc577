#include "models/t5/unigram_encoder.h"

#include <algorithm>
#include <cfloat>

#include "core/diagnostics/error.h"
#include "models/t5/sentencepiece_normalizer.h"

namespace flashps::sentencepiece {
namespace {

constexpr float kUnknownPenalty = 10.0f;  // unigram_model.h kUnkPenalty

// SentencePiece's OneCharLen: the length the first byte announces, not a validity check.
size_t announced_char_length(uint8_t first) {
  static constexpr size_t kLengths[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLengths[first >> 4];
}

// 0..255 for exactly "<0xHH>" (upper-case hex, as SentencePiece writes and accepts), else -1.
int byte_piece_value(const std::string& text) {
  if (text.size() != 6 || text.compare(0, 3, "<0x") != 0 || text[5] != '>') return -1;
  int value = 0;
  for (const char digit : text.substr(3, 2)) {
    if (digit >= '0' && digit <= '9') value = value * 16 + (digit - '0');
    else if (digit >= 'A' && digit <= 'F') value = value * 16 + (digit - 'A' + 10);
    else return -1;
  }
  return value;
}

}  // namespace

UnigramEncoder::UnigramEncoder(const ModelProto& model, const std::string& source_name)
    : pieces_(model.pieces), byte_fallback_(model.trainer.byte_fallback) {
  if (model.trainer.model_type != 1)
    throw UnsupportedError(source_name + ": SentencePiece model type " + std::to_string(model.trainer.model_type) +
                           " is not supported (only unigram models, as T5 uses)");
  std::fill(std::begin(byte_piece_ids_), std::end(byte_piece_ids_), -1);
  min_score_ = FLT_MAX;
  max_score_ = FLT_MIN;  // as SentencePiece: the smallest positive float, not the lowest
  for (size_t id = 0; id < pieces_.size(); ++id) {
    const Piece& piece = pieces_[id];
    const std::string where = source_name + ": piece " + std::to_string(id);
    if (piece.text.empty()) throw CorruptDataError(where + " is empty");
    const bool matchable = piece.type == PieceType::normal || piece.type == PieceType::user_defined ||
                           piece.type == PieceType::unused;
    if (!(matchable ? matchable_ : reserved_).emplace(piece.text, static_cast<int>(id)).second)
      throw CorruptDataError(where + " ('" + piece.text + "') is defined twice");
    if (matchable) longest_piece_bytes_ = std::max(longest_piece_bytes_, piece.text.size());
    if (piece.type == PieceType::normal) {
      min_score_ = std::min(min_score_, piece.score);
      max_score_ = std::max(max_score_, piece.score);
    }
    if (piece.type == PieceType::unknown) {
      if (unknown_id_ >= 0) throw CorruptDataError(where + ": a second unknown piece");
      unknown_id_ = static_cast<int>(id);
    }
    if (piece.type == PieceType::byte) {
      if (!byte_fallback_) throw CorruptDataError(where + " is a byte piece, but the model has no byte fallback");
      const int value = byte_piece_value(piece.text);
      if (value < 0) throw CorruptDataError(where + " ('" + piece.text + "') is not a byte piece <0xXX>");
      byte_piece_ids_[value] = static_cast<int>(id);
    }
  }
  if (unknown_id_ < 0) throw CorruptDataError(source_name + ": the model has no unknown piece");
  if (byte_fallback_ && std::count(std::begin(byte_piece_ids_), std::end(byte_piece_ids_), -1) > 0)
    throw CorruptDataError(source_name + ": byte fallback is on but not all 256 byte pieces exist");
}

int UnigramEncoder::piece_id(const std::string& text) const {
  if (const auto found = matchable_.find(text); found != matchable_.end()) return found->second;
  if (const auto found = reserved_.find(text); found != reserved_.end()) return found->second;
  return -1;
}

std::vector<std::string> UnigramEncoder::user_defined_symbols() const {
  std::vector<std::string> symbols;
  for (const Piece& piece : pieces_)
    if (piece.type == PieceType::user_defined) symbols.push_back(piece.text);
  return symbols;
}

std::vector<EncodedPiece> UnigramEncoder::encode(std::string_view normalized) const {
  struct BestPath {
    int id = -1;
    float score = 0;
    int starts_at = -1;  // -1: no path ends here yet
  };
  const size_t size = normalized.size();
  if (size == 0) return {};
  const float unknown_score = min_score_ - kUnknownPenalty;
  std::vector<BestPath> best(size + 1);
  for (size_t start = 0; start < size;) {
    const float score_so_far = best[start].score;
    const size_t char_length = std::min(announced_char_length(static_cast<uint8_t>(normalized[start])), size - start);
    bool single_character_piece = false;
    const size_t longest = std::min(longest_piece_bytes_, size - start);
    for (size_t length = 1; length <= longest; ++length) {
      const auto found = matchable_.find(normalized.substr(start, length));
      if (found == matchable_.end()) continue;
      const Piece& piece = pieces_[found->second];
      if (piece.type == PieceType::unused) continue;
      // User-defined symbols get a bonus so they are always chosen, as SentencePiece does.
      const float score = piece.type == PieceType::user_defined ? static_cast<float>(length * max_score_ - 0.1)
                                                                 : piece.score;
      BestPath& end = best[start + length];
      if (end.starts_at < 0 || score_so_far + score > end.score) end = {found->second, score_so_far + score, int(start)};
      single_character_piece |= length == char_length;
    }
    if (!single_character_piece) {
      BestPath& end = best[start + char_length];
      if (end.starts_at < 0 || score_so_far + unknown_score > end.score)
        end = {unknown_id_, score_so_far + unknown_score, int(start)};
    }
    start += char_length;
  }

  std::vector<EncodedPiece> reversed;
  for (size_t end = size; end > 0; end = static_cast<size_t>(best[end].starts_at))
    reversed.push_back({std::string(normalized.substr(best[end].starts_at, end - best[end].starts_at)), best[end].id});
  // Runs of unknown pieces become one (SentencePieceProcessor), or bytes with byte fallback.
  std::vector<EncodedPiece> pieces;
  for (auto piece = reversed.rbegin(); piece != reversed.rend(); ++piece) {
    const bool unknown = piece->id == unknown_id_;
    if (unknown && byte_fallback_) {
      for (const char byte : piece->text) {
        const int id = byte_piece_ids_[uint8_t(byte)];
        pieces.push_back({pieces_[id].text, id});  // "<0x41>", as SentencePiece reports byte pieces
      }
    } else if (unknown && !pieces.empty() && pieces.back().id == unknown_id_) {
      pieces.back().text += piece->text;
    } else {
      pieces.push_back(std::move(*piece));
    }
  }
  return pieces;
}

}  // namespace flashps::sentencepiece
