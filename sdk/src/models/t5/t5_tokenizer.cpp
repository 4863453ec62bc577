#include "models/t5/t5_tokenizer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "models/t5/sentencepiece_model.h"
#include "models/t5/sentencepiece_normalizer.h"
#include "models/t5/spiece_model_check.h"
#include "models/t5/unigram_encoder.h"

namespace flashps {

struct T5Tokenizer::Impl {
  Impl(const sentencepiece::ModelProto& model, const std::string& source_name)
      : source(source_name), encoder(model, source_name),
        normalizer(model.normalizer, model.trainer.treat_whitespace_as_suffix, encoder.user_defined_symbols(),
                   source_name) {}

  std::vector<sentencepiece::EncodedPiece> encode(const std::string& text) const {
    return encoder.encode(normalizer.normalize(text));
  }

  std::string source;  // names the model in errors
  sentencepiece::UnigramEncoder encoder;
  sentencepiece::Normalizer normalizer;
  int64_t eos = 0, pad = 0, unk = 0;
};

namespace {

namespace fs = std::filesystem;

// Real spiece.model files are under 5 MB; a path to a weights file must not be read into memory.
constexpr std::uintmax_t kMaxModelBytes = 64u << 20;

std::string read_model_file(const std::string& path) {
  std::error_code error;
  if (!fs::exists(path, error)) throw NotFoundError(path + ": no such file (the T5 tokenizer's spiece.model)");
  if (fs::is_directory(path, error)) throw InvalidArgumentError(path + ": is a directory, not a spiece.model");
  const std::uintmax_t size = fs::file_size(path, error);
  if (error) throw IoError(path + ": cannot read: " + error.message());
  if (size > kMaxModelBytes)
    throw CorruptDataError(path + ": " + std::to_string(size) + " bytes, too large for a SentencePiece model");
  std::ifstream stream(path, std::ios::binary);
  if (!stream) throw IoError(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream bytes;
  bytes << stream.rdbuf();
  if (stream.bad()) throw IoError(path + ": read failed");
  return bytes.str();
}

// A token entry of a Hugging Face tokenizer file: "</s>" or {"content": "</s>", ...}.
void take_token_name(std::string& name, const nlohmann::json& config, const char* key, const fs::path& path) {
  if (!name.empty()) return;  // an earlier file named it
  auto found = config.find(key);
  if (found == config.end() || found->is_null()) return;
  if (found->is_string()) {
    name = found->get<std::string>();
  } else if (found->is_object() && found->contains("content") && found->at("content").is_string()) {
    name = found->at("content").get<std::string>();
  } else {
    throw CorruptDataError(path.string() + ": \"" + key + "\" is neither a string nor {\"content\": <string>}");
  }
}

// tokenizer_config.json first, then special_tokens_map.json for what it leaves out, as
// transformers' from_pretrained does.
T5SpecialTokens read_special_tokens(const fs::path& dir) {
  T5SpecialTokens tokens;
  for (const char* file_name : {"tokenizer_config.json", "special_tokens_map.json"}) {
    const fs::path path = dir / file_name;
    if (!fs::exists(path)) continue;
    const nlohmann::json config = read_json_file(path.string());
    if (!config.is_object()) throw CorruptDataError(path.string() + ": not a JSON object");
    take_token_name(tokens.eos, config, "eos_token", path);
    take_token_name(tokens.pad, config, "pad_token", path);
    take_token_name(tokens.unk, config, "unk_token", path);
  }
  return tokens;
}

// A named token must be a piece of the model; an unnamed one is the model's own: the trainer
// spec's piece for the role (eos_piece "</s>", pad_piece "<pad>") when it is a control piece, as
// libsentencepiece's eos_id() and pad_id() answer.
int64_t resolve_token(const sentencepiece::ModelProto& model, const sentencepiece::UnigramEncoder& encoder,
                      const std::string& name, const std::string& model_piece, const char* role,
                      const std::string& source) {
  if (!name.empty()) {
    const int id = encoder.piece_id(name);
    if (id < 0) throw CorruptDataError(source + ": the " + role + " token '" + name + "' is not a piece of this model");
    return id;
  }
  const int id = encoder.piece_id(model_piece);
  if (id < 0 || model.pieces[id].type != sentencepiece::PieceType::control)
    throw CorruptDataError(source + ": the model has no " + role + " token (no control piece '" + model_piece + "')");
  return id;
}

}  // namespace

T5Tokenizer::T5Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

T5Tokenizer T5Tokenizer::load(const std::string& spiece_model_path) {
  const std::string bytes = read_model_file(spiece_model_path);
  const T5SpecialTokens tokens = read_special_tokens(fs::path(spiece_model_path).parent_path());
  return from_model_bytes(bytes, spiece_model_path, tokens);
}

T5Tokenizer T5Tokenizer::from_model_bytes(const std::string& model_bytes, const std::string& source_name,
                                          const T5SpecialTokens& special_tokens) {
  check_spiece_model(model_bytes, source_name);
  const sentencepiece::ModelProto model = sentencepiece::parse_model_proto(model_bytes, source_name);
  auto impl = std::make_shared<Impl>(model, source_name);
  const sentencepiece::TrainerSpec& trainer = model.trainer;
  impl->eos = resolve_token(model, impl->encoder, special_tokens.eos, trainer.eos_piece, "end-of-sequence", source_name);
  impl->pad = resolve_token(model, impl->encoder, special_tokens.pad, trainer.pad_piece, "padding", source_name);
  impl->unk = special_tokens.unk.empty() ? impl->encoder.unknown_id()
                                         : resolve_token(model, impl->encoder, special_tokens.unk, "", "unknown", source_name);
  return T5Tokenizer(std::move(impl));
}

std::vector<std::string> T5Tokenizer::pieces(const std::string& text) const {
  std::vector<std::string> pieces;
  for (sentencepiece::EncodedPiece& piece : impl_->encode(text)) pieces.push_back(std::move(piece.text));
  return pieces;
}

std::vector<int64_t> T5Tokenizer::ids(const std::string& text) const {
  std::vector<int64_t> ids;
  for (const sentencepiece::EncodedPiece& piece : impl_->encode(text)) ids.push_back(piece.id);
  return ids;
}

T5Tokenizer::Encoded T5Tokenizer::encode(const std::string& text, int max_length) const {
  if (max_length < 1 || max_length > kMaxLength)
    throw InvalidArgumentError("T5 tokenizer: max_length " + std::to_string(max_length) + " is outside 1.." +
                               std::to_string(kMaxLength));
  std::vector<int64_t> text_ids = ids(text);
  Encoded encoded;
  const size_t room = static_cast<size_t>(max_length) - 1;  // one place for the eos
  encoded.truncated = text_ids.size() > room;
  text_ids.resize(std::min(text_ids.size(), room));
  encoded.input_ids = std::move(text_ids);
  encoded.input_ids.push_back(impl_->eos);
  encoded.attention_mask.assign(encoded.input_ids.size(), 1);
  encoded.input_ids.resize(max_length, impl_->pad);
  encoded.attention_mask.resize(max_length, 0);
  return encoded;
}

int64_t T5Tokenizer::vocab_size() const { return impl_->encoder.vocab_size(); }
int64_t T5Tokenizer::eos_token_id() const { return impl_->eos; }
int64_t T5Tokenizer::pad_token_id() const { return impl_->pad; }
int64_t T5Tokenizer::unk_token_id() const { return impl_->unk; }

}  // namespace flashps
