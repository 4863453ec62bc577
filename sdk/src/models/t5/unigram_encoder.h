// SentencePiece's unigram encoder (unigram_model.cc EncodeOptimized, then the processor's merge
// of unknown runs): the most probable segmentation of normalized text into vocabulary pieces,
// by Viterbi over byte positions. Characters no piece covers become the unknown piece, or their
// UTF-8 bytes' <0xXX> pieces when the model has byte fallback.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "models/t5/sentencepiece_model.h"

namespace flashps::sentencepiece {

struct EncodedPiece {
  std::string text;  // the piece's surface in the normalized text; a byte piece's name ("<0x41>")
  int id = 0;
};

class UnigramEncoder {
 public:
  // Throws CorruptDataError naming `source_name` for a model SentencePiece would refuse (empty or
  // duplicate pieces, no or two unknown pieces, byte pieces without byte fallback).
  UnigramEncoder(const ModelProto& model, const std::string& source_name);
  // The piece maps view the pieces' strings: moving keeps them valid, copying would not.
  UnigramEncoder(const UnigramEncoder&) = delete;
  UnigramEncoder& operator=(const UnigramEncoder&) = delete;
  UnigramEncoder(UnigramEncoder&&) = default;
  UnigramEncoder& operator=(UnigramEncoder&&) = default;

  std::vector<EncodedPiece> encode(std::string_view normalized) const;

  int unknown_id() const { return unknown_id_; }
  // The id of a piece by its text (any type), or -1.
  int piece_id(const std::string& text) const;
  int vocab_size() const { return static_cast<int>(pieces_.size()); }
  std::vector<std::string> user_defined_symbols() const;

 private:
  std::vector<Piece> pieces_;
  std::unordered_map<std::string_view, int> matchable_;  // normal, user-defined and unused pieces
  std::unordered_map<std::string_view, int> reserved_;   // control, unknown and byte pieces
  size_t longest_piece_bytes_ = 0;
  int unknown_id_ = -1;
  float min_score_ = 0, max_score_ = 0;
  bool byte_fallback_ = false;
  int byte_piece_ids_[256] = {};
};

}  // namespace flashps::sentencepiece
