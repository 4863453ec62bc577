// The parts of a SentencePiece model file (spiece.model, a serialized ModelProto) that encoding
// needs, read by a small bounds-checked protobuf reader of our own.
//
// Why not libsentencepiece: Debian 12's libsentencepiece.so.0 bundles protobuf-lite and exports
// its symbols, so a process that also loads LibTorch (which loads libprotobuf.so.32) crashes in
// libprotobuf's static initialisers. The library stays the reference our tests compare against,
// in a program without LibTorch (tests/t5_tokenizer/).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace flashps::sentencepiece {

enum class PieceType : int { normal = 1, unknown = 2, control = 3, user_defined = 4, unused = 5, byte = 6 };

struct Piece {
  std::string text;
  float score = 0;
  PieceType type = PieceType::normal;
};

// Field defaults are sentencepiece_model.proto's.
struct NormalizerSpec {
  std::string name;
  std::string precompiled_charsmap;  // uint32 trie size, Darts double-array trie, normalized strings
  bool add_dummy_prefix = true;
  bool remove_extra_whitespaces = true;
  bool escape_whitespaces = true;
};

struct TrainerSpec {
  int model_type = 1;  // 1 unigram, 2 BPE, 3 word, 4 char
  bool byte_fallback = false;
  bool treat_whitespace_as_suffix = false;
  int unk_id = 0, bos_id = 1, eos_id = 2, pad_id = -1;
  std::string unk_piece = "<unk>", bos_piece = "<s>", eos_piece = "</s>", pad_piece = "<pad>";
};

struct ModelProto {
  std::vector<Piece> pieces;
  TrainerSpec trainer;
  NormalizerSpec normalizer;
};

// Parses a serialized ModelProto. Throws CorruptDataError naming `source_name` for malformed
// bytes (truncated fields, lengths past the end, group wire types).
ModelProto parse_model_proto(std::string_view bytes, const std::string& source_name);

// Serializes a ModelProto as SentencePiece writes spiece.model (the fields above only), for
// random-weight model folders (models/random/random_text_encoders.h) and tests.
std::string serialize_model_proto(const ModelProto& model);

}  // namespace flashps::sentencepiece
