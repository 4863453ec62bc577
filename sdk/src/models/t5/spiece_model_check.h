// Checks a spiece.model (a serialized SentencePiece ModelProto) before it is parsed. The SDK's
// normaliser bounds-checks its reads, but would silently normalise differently with a corrupt
// precompiled table (one that makes libsentencepiece read out of bounds, as fuzzing found:
// fuzz/corpus/t5_tokenizer/corrupt_charsmap_transition.model); and a file cut at a field boundary
// still parses, but lacks its specs. Both become errors here.
#pragma once
#include <string>

namespace flashps {

// Throws CorruptDataError naming `source_name` unless the bytes are a well-formed protobuf message
// with a trainer spec and a normalizer spec, and every precompiled_charsmap (normalizer and
// denormalizer spec) is a double-array trie whose every reachable transition, leaf and
// replacement string lies inside the table.
void check_spiece_model(const std::string& model_bytes, const std::string& source_name);

}  // namespace flashps
