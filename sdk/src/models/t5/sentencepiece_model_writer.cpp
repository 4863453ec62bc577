// serialize_model_proto: the protobuf encoding of the ModelProto fields the reader knows
// (sentencepiece_model.proto's field numbers), defaults written out so no reader guesses.
#include <cstring>

#include "models/t5/sentencepiece_model.h"

namespace flashps::sentencepiece {
namespace {

class ProtoWriter {
 public:
  void varint_field(int field, uint64_t value) {
    key(field, 0);
    varint(value);
  }
  // int32 as protobuf writes it: a negative value is sign-extended to ten bytes.
  void int32_field(int field, int32_t value) { varint_field(field, static_cast<uint64_t>(static_cast<int64_t>(value))); }
  void bytes_field(int field, const std::string& value) {
    key(field, 2);
    varint(value.size());
    bytes_ += value;
  }
  void float_field(int field, float value) {
    key(field, 5);
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    for (int i = 0; i < 4; ++i) bytes_ += static_cast<char>((bits >> (8 * i)) & 0xff);  // little-endian
  }
  const std::string& bytes() const { return bytes_; }

 private:
  void key(int field, int wire_type) { varint((static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(wire_type)); }
  void varint(uint64_t value) {
    while (value >= 0x80) {
      bytes_ += static_cast<char>((value & 0x7f) | 0x80);
      value >>= 7;
    }
    bytes_ += static_cast<char>(value);
  }
  std::string bytes_;
};

}  // namespace

std::string serialize_model_proto(const ModelProto& model) {
  ProtoWriter proto;
  for (const Piece& piece : model.pieces) {
    ProtoWriter entry;
    entry.bytes_field(1, piece.text);
    entry.float_field(2, piece.score);
    entry.int32_field(3, static_cast<int32_t>(piece.type));
    proto.bytes_field(1, entry.bytes());
  }
  ProtoWriter trainer;
  trainer.int32_field(3, model.trainer.model_type);
  trainer.varint_field(24, model.trainer.treat_whitespace_as_suffix ? 1 : 0);
  trainer.varint_field(35, model.trainer.byte_fallback ? 1 : 0);
  trainer.int32_field(40, model.trainer.unk_id);
  trainer.int32_field(41, model.trainer.bos_id);
  trainer.int32_field(42, model.trainer.eos_id);
  trainer.int32_field(43, model.trainer.pad_id);
  trainer.bytes_field(45, model.trainer.unk_piece);
  trainer.bytes_field(46, model.trainer.bos_piece);
  trainer.bytes_field(47, model.trainer.eos_piece);
  trainer.bytes_field(48, model.trainer.pad_piece);
  proto.bytes_field(2, trainer.bytes());
  ProtoWriter normalizer;
  normalizer.bytes_field(1, model.normalizer.name);
  if (!model.normalizer.precompiled_charsmap.empty()) normalizer.bytes_field(2, model.normalizer.precompiled_charsmap);
  normalizer.varint_field(3, model.normalizer.add_dummy_prefix ? 1 : 0);
  normalizer.varint_field(4, model.normalizer.remove_extra_whitespaces ? 1 : 0);
  normalizer.varint_field(5, model.normalizer.escape_whitespaces ? 1 : 0);
  proto.bytes_field(3, normalizer.bytes());
  return proto.bytes();
}

}  // namespace flashps::sentencepiece
