#include "models/t5/sentencepiece_model.h"

#include <cstring>

#include "core/diagnostics/error.h"

namespace flashps::sentencepiece {
namespace {

// Protobuf wire format, only what ModelProto uses: varints, 32-bit floats, length-delimited
// strings and messages. Every read is checked against the end of its message.
class WireReader {
 public:
  WireReader(std::string_view bytes, const std::string& source_name) : bytes_(bytes), source_(source_name) {}

  bool done() const { return at_ >= bytes_.size(); }

  uint64_t varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at_ >= bytes_.size()) fail("a number runs past the end");
      const uint8_t byte = static_cast<uint8_t>(bytes_[at_++]);
      value |= uint64_t(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return value;
    }
    fail("a number is longer than 10 bytes");
  }

  float fixed32_float() {
    if (bytes_.size() - at_ < 4) fail("a float runs past the end");
    uint32_t bits = 0;
    for (int i = 0; i < 4; ++i) bits |= uint32_t(static_cast<uint8_t>(bytes_[at_ + i])) << (8 * i);
    at_ += 4;
    float value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
  }

  std::string_view length_delimited() {
    const uint64_t length = varint();
    if (length > bytes_.size() - at_) fail("a field's length runs past the end");
    const std::string_view value = bytes_.substr(at_, length);
    at_ += length;
    return value;
  }

  void skip(int wire_type) {
    switch (wire_type) {
      case 0: varint(); return;
      case 1:
        if (bytes_.size() - at_ < 8) fail("a 64-bit field runs past the end");
        at_ += 8;
        return;
      case 2: length_delimited(); return;
      case 5:
        if (bytes_.size() - at_ < 4) fail("a 32-bit field runs past the end");
        at_ += 4;
        return;
      default: fail("wire type " + std::to_string(wire_type) + " is not used by SentencePiece models");
    }
  }

  // A field's number and wire type; the caller reads or skips its value.
  std::pair<uint32_t, int> tag() {
    const uint64_t key = varint();
    if ((key >> 3) == 0 || (key >> 3) > 0x1fffffff) fail("a field number is out of range");
    return {static_cast<uint32_t>(key >> 3), static_cast<int>(key & 7)};
  }

  int32_t int32_value(int wire_type) {
    expect(wire_type, 0);
    return static_cast<int32_t>(varint());  // negative int32s are 10-byte varints, truncated back
  }
  bool bool_value(int wire_type) {
    expect(wire_type, 0);
    return varint() != 0;
  }
  std::string_view bytes_value(int wire_type) {
    expect(wire_type, 2);
    return length_delimited();
  }
  float float_value(int wire_type) {
    expect(wire_type, 5);
    return fixed32_float();
  }

  [[noreturn]] void fail(const std::string& problem) const {
    throw CorruptDataError(source_ + ": not a valid SentencePiece model (" + problem + " at byte " +
                           std::to_string(at_) + ")");
  }

 private:
  void expect(int wire_type, int wanted) const {
    if (wire_type != wanted) fail("a field has wire type " + std::to_string(wire_type) + ", not " + std::to_string(wanted));
  }

  std::string_view bytes_;
  const std::string& source_;
  size_t at_ = 0;
};

Piece parse_piece(std::string_view bytes, const std::string& source_name) {
  WireReader reader(bytes, source_name);
  Piece piece;
  while (!reader.done()) {
    const auto [field, wire_type] = reader.tag();
    if (field == 1) {
      piece.text = std::string(reader.bytes_value(wire_type));
    } else if (field == 2) {
      piece.score = reader.float_value(wire_type);
    } else if (field == 3) {
      const int32_t type = reader.int32_value(wire_type);
      if (type < 1 || type > 6) reader.fail("piece type " + std::to_string(type) + " is unknown");
      piece.type = static_cast<PieceType>(type);
    } else {
      reader.skip(wire_type);
    }
  }
  return piece;
}

TrainerSpec parse_trainer_spec(std::string_view bytes, const std::string& source_name) {
  WireReader reader(bytes, source_name);
  TrainerSpec spec;
  while (!reader.done()) {
    const auto [field, wire_type] = reader.tag();
    switch (field) {
      case 3: spec.model_type = reader.int32_value(wire_type); break;
      case 24: spec.treat_whitespace_as_suffix = reader.bool_value(wire_type); break;
      case 35: spec.byte_fallback = reader.bool_value(wire_type); break;
      case 40: spec.unk_id = reader.int32_value(wire_type); break;
      case 41: spec.bos_id = reader.int32_value(wire_type); break;
      case 42: spec.eos_id = reader.int32_value(wire_type); break;
      case 43: spec.pad_id = reader.int32_value(wire_type); break;
      case 45: spec.unk_piece = std::string(reader.bytes_value(wire_type)); break;
      case 46: spec.bos_piece = std::string(reader.bytes_value(wire_type)); break;
      case 47: spec.eos_piece = std::string(reader.bytes_value(wire_type)); break;
      case 48: spec.pad_piece = std::string(reader.bytes_value(wire_type)); break;
      default: reader.skip(wire_type);
    }
  }
  return spec;
}

NormalizerSpec parse_normalizer_spec(std::string_view bytes, const std::string& source_name) {
  WireReader reader(bytes, source_name);
  NormalizerSpec spec;
  while (!reader.done()) {
    const auto [field, wire_type] = reader.tag();
    switch (field) {
      case 1: spec.name = std::string(reader.bytes_value(wire_type)); break;
      case 2: spec.precompiled_charsmap = std::string(reader.bytes_value(wire_type)); break;
      case 3: spec.add_dummy_prefix = reader.bool_value(wire_type); break;
      case 4: spec.remove_extra_whitespaces = reader.bool_value(wire_type); break;
      case 5: spec.escape_whitespaces = reader.bool_value(wire_type); break;
      default: reader.skip(wire_type);
    }
  }
  return spec;
}

}  // namespace

ModelProto parse_model_proto(std::string_view bytes, const std::string& source_name) {
  WireReader reader(bytes, source_name);
  ModelProto model;
  while (!reader.done()) {
    const auto [field, wire_type] = reader.tag();
    switch (field) {
      case 1: model.pieces.push_back(parse_piece(reader.bytes_value(wire_type), source_name)); break;
      case 2: model.trainer = parse_trainer_spec(reader.bytes_value(wire_type), source_name); break;
      case 3: model.normalizer = parse_normalizer_spec(reader.bytes_value(wire_type), source_name); break;
      default: reader.skip(wire_type);  // self-test data, the denormalizer
    }
  }
  return model;
}

}  // namespace flashps::sentencepiece
