#include "models/t5/spiece_model_check.h"

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "core/diagnostics/error.h"

namespace flashps {
namespace {

// Field numbers of sentencepiece_model.proto.
constexpr uint64_t kTrainerSpecField = 2, kNormalizerSpecField = 3, kDenormalizerSpecField = 5;
constexpr uint64_t kPrecompiledCharsmapField = 2;  // NormalizerSpec.precompiled_charsmap
constexpr uint64_t kLengthDelimited = 2;

struct Field {
  uint64_t number = 0;
  uint64_t wire_type = 0;
  std::string_view payload;  // of a length-delimited field
};

// Visits every field of a serialized protobuf message; false if the bytes are not one (groups,
// which no SentencePiece message has, count as malformed).
bool for_each_field(std::string_view message, const std::function<void(const Field&)>& visit) {
  size_t at = 0;
  auto read_varint = [&](uint64_t& value) {
    value = 0;
    for (int shift = 0; shift < 64 && at < message.size(); shift += 7) {
      const auto byte = static_cast<uint8_t>(message[at++]);
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return true;
    }
    return false;
  };
  while (at < message.size()) {
    uint64_t tag = 0, value = 0;
    if (!read_varint(tag) || (tag >> 3) == 0) return false;
    Field field{tag >> 3, tag & 7, {}};
    if (field.wire_type == 0) {
      if (!read_varint(value)) return false;
    } else if (field.wire_type == 1 || field.wire_type == 5) {
      const size_t width = field.wire_type == 1 ? 8 : 4;
      if (message.size() - at < width) return false;
      at += width;
    } else if (field.wire_type == kLengthDelimited) {
      if (!read_varint(value) || value > message.size() - at) return false;
      field.payload = message.substr(at, value);
      at += value;
    } else {
      return false;
    }
    visit(field);
  }
  return true;
}

uint32_t little_endian_u32(const char* bytes) {
  const auto* b = reinterpret_cast<const uint8_t*>(bytes);
  return b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
}

// A precompiled charsmap: <uint32 trie size in bytes><darts-clone double array><NUL-terminated
// replacement strings>. darts-clone's commonPrefixSearch reads unit[state ^ byte] for each input
// byte without bounds checks, so every state reachable from the root must have all 256 successor
// slots inside the array, and every leaf a value indexing a terminated string. Returns the
// problem, or "" for a sound table. Cost: 256 reads per reachable state.
std::string charsmap_problem(std::string_view blob) {
  if (blob.size() < 4) return "shorter than its 4-byte header";
  const uint32_t trie_bytes = little_endian_u32(blob.data());
  if (trie_bytes > blob.size() - 4) return "its trie is larger than the table";
  std::vector<uint32_t> units(trie_bytes / 4);
  if (units.empty()) return "its trie is empty";
  for (size_t i = 0; i < units.size(); ++i) units[i] = little_endian_u32(blob.data() + 4 + 4 * i);
  const std::string_view strings = blob.substr(4 + trie_bytes);

  // darts-clone's DoubleArrayUnit fields.
  auto offset = [](uint32_t unit) -> size_t { return (unit >> 10) << ((unit & (1u << 9)) >> 6); };
  auto has_leaf = [](uint32_t unit) { return ((unit >> 8) & 1) == 1; };
  auto label = [](uint32_t unit) { return unit & ((1u << 31) | 0xff); };
  auto value = [](uint32_t unit) { return unit & ((1u << 31) - 1); };

  std::vector<bool> visited(units.size(), false);
  std::vector<size_t> pending;
  auto enter = [&](size_t state) {
    if ((state | 0xff) >= units.size()) return false;
    if (!visited[state]) pending.push_back(state);
    visited[state] = true;
    return true;
  };
  if (!enter(offset(units[0]))) return "its root points outside the trie";
  while (!pending.empty()) {
    const size_t state = pending.back();
    pending.pop_back();
    for (uint32_t byte = 0; byte < 256; ++byte) {
      const uint32_t child = units[state ^ byte];
      if (label(child) != byte) continue;
      const size_t next = state ^ byte ^ offset(child);
      if (!enter(next)) return "a transition points outside the trie";
      if (!has_leaf(child)) continue;
      const size_t at = value(units[next]);
      if (at >= strings.size() || strings.find('\0', at) == std::string_view::npos)
        return "a replacement string lies outside the table";
    }
  }
  return "";
}

}  // namespace

void check_spiece_model(const std::string& model_bytes, const std::string& source_name) {
  if (model_bytes.empty()) throw CorruptDataError(source_name + ": not a SentencePiece model (empty)");
  bool has_trainer_spec = false, has_normalizer_spec = false, nested_ok = true;
  std::string problem;
  auto check_normalizer_spec = [&](std::string_view spec) {
    nested_ok &= for_each_field(spec, [&](const Field& field) {
      if (field.number != kPrecompiledCharsmapField || field.wire_type != kLengthDelimited) return;
      if (field.payload.empty() || !problem.empty()) return;  // empty: no table, identity
      const std::string table_problem = charsmap_problem(field.payload);
      if (!table_problem.empty()) problem = "its normalisation table is corrupt: " + table_problem;
    });
  };
  const bool parsed = for_each_field(model_bytes, [&](const Field& field) {
    if (field.wire_type != kLengthDelimited) return;
    if (field.number == kTrainerSpecField) has_trainer_spec = true;
    if (field.number == kNormalizerSpecField) has_normalizer_spec = true;
    if (field.number == kNormalizerSpecField || field.number == kDenormalizerSpecField)
      check_normalizer_spec(field.payload);
  });
  if (!parsed || !nested_ok)
    throw CorruptDataError(source_name + ": not a SentencePiece model (not a well-formed protobuf message)");
  if (!has_trainer_spec || !has_normalizer_spec)
    throw CorruptDataError(source_name + ": not a SentencePiece model (no trainer or normalizer spec: truncated?)");
  if (!problem.empty()) throw CorruptDataError(source_name + ": corrupt SentencePiece model: " + problem);
}

}  // namespace flashps
