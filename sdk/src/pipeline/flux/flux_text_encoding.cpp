#include "pipeline/flux/flux_text_encoding.h"

#include <ATen/ATen.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/files/content_hash.h"
#include "core/diagnostics/error.h"
#include "models/loading/model_files.h"

namespace flashps {
namespace {

namespace fs = std::filesystem;

// model_index.json names a component with ["library", "Class"]; null (or absent) means none.
bool names_component(const nlohmann::json& index, const std::string& name) {
  const auto found = index.find(name);
  return found != index.end() && !found->is_null();
}

at::Tensor ids_tensor(const std::vector<int64_t>& ids) {
  return at::tensor(at::ArrayRef<int64_t>(ids), at::kLong).unsqueeze(0);
}

engine::CaptureId prompt_capture_id(const FluxTextEncoders& encoders, const FluxPromptTokens& tokens) {
  ContentHasher hasher;
  hasher.update(tokens.clip_ids.data(), tokens.clip_ids.size() * sizeof(int64_t));
  hasher.update("|");
  hasher.update(tokens.t5_ids.data(), tokens.t5_ids.size() * sizeof(int64_t));
  engine::CaptureId id;
  id.template_hash = "prompt-" + hasher.hex();
  id.model_fingerprint = encoders.fingerprint;
  id.config = "flux prompt embeddings: clip " + std::to_string(tokens.clip_ids.size()) + " tokens, t5 " +
              std::to_string(tokens.t5_ids.size()) + " tokens";
  return id;
}

// The two entries of a stored prompt: the T5 states and the pooled CLIP vector.
constexpr engine::EntryKey kPromptEmbedsEntry{0, 0, engine::Slot::hidden};
constexpr engine::EntryKey kPooledEntry{0, 1, engine::Slot::hidden};

}  // namespace

FluxTextEncoders load_flux_text_encoders(const std::string& model_dir, const nlohmann::json& model_index,
                                         const std::string& model_index_path, at::ScalarType dtype) {
  FluxTextEncoders encoders;
  const bool names_clip = names_component(model_index, "text_encoder");
  const bool names_t5 = names_component(model_index, "text_encoder_2");
  if (!names_clip && !names_t5) return encoders;
  // FluxPipeline needs both: CLIP for the pooled vector, T5 for the token states.
  for (const char* component : {"text_encoder", "tokenizer", "text_encoder_2", "tokenizer_2"}) {
    if (!names_component(model_index, component))
      throw CorruptDataError(model_index_path + ": names " + (names_clip ? "text_encoder" : "text_encoder_2") +
                             " but not " + component + "; a Flux folder with text encoders needs text_encoder, "
                             "tokenizer, text_encoder_2 and tokenizer_2");
    if (!fs::is_directory(fs::path(model_dir) / component))
      throw NotFoundError(model_dir + ": model_index.json names " + component + ", but there is no " + component +
                          "/ folder");
  }
  const fs::path dir(model_dir);
  encoders.tokenizer = ClipTokenizer::load((dir / "tokenizer").string());
  // CLIP-L is small: float32 whatever the pipeline's dtype, as its pooled vector steers every block.
  encoders.text_encoder = load_clip_text_model((dir / "text_encoder").string(), at::kFloat);
  const fs::path spiece = dir / "tokenizer_2" / "spiece.model";
  encoders.tokenizer_2 = T5Tokenizer::load(spiece.string());
  encoders.text_encoder_2 = load_t5_encoder_model((dir / "text_encoder_2").string(), dtype);
  if (encoders.tokenizer_2->vocab_size() > encoders.text_encoder_2->config().vocab_size)
    throw CorruptDataError(spiece.string() + ": its vocabulary of " +
                           std::to_string(encoders.tokenizer_2->vocab_size()) +
                           " pieces is larger than text_encoder_2's vocab_size " +
                           std::to_string(encoders.text_encoder_2->config().vocab_size));
  const auto length = model_index.find("_flashps_max_sequence_length");
  if (length != model_index.end()) {
    if (!length->is_number_integer() || length->get<int>() < 1 || length->get<int>() > 512)
      throw CorruptDataError(model_index_path + ": _flashps_max_sequence_length must be an integer from 1 to 512");
    encoders.max_sequence_length = length->get<int>();
  }
  // Embeddings depend on the encoders' weights and the token ids only (the cache key holds the
  // ids), so the tokenizers are not part of the fingerprint.
  encoders.fingerprint = "flux-text:" + model_fingerprint(model_dir, {"text_encoder", "text_encoder_2"},
                                                          {"text_encoder", "text_encoder_2"}) +
                         ":" + c10::toString(dtype);
  return encoders;
}

FluxPromptTokens tokenize_flux_prompt(const FluxTextEncoders& encoders, const std::string& prompt,
                                      int max_sequence_length) {
  if (!encoders.present()) throw Error("this Flux folder has no text encoders");
  const int length = max_sequence_length == 0 ? encoders.max_sequence_length : max_sequence_length;
  // FluxPipeline refuses max_sequence_length > 512 (T5's trained length).
  if (length < 1 || length > 512)
    throw InvalidArgumentError("max_sequence_length must be 1 to 512, got " + std::to_string(length));
  FluxPromptTokens tokens;
  const TokenizedPrompt clip = encoders.tokenizer->tokenize(prompt, 77);
  const T5Tokenizer::Encoded t5 = encoders.tokenizer_2->encode(prompt, length);
  tokens.clip_ids = clip.input_ids;
  tokens.t5_ids = t5.input_ids;
  tokens.truncated = clip.truncated || t5.truncated;
  return tokens;
}

Conditioning encode_flux_prompt(const FluxTextEncoders& encoders, const FluxPromptTokens& tokens) {
  if (!encoders.present()) throw Error("this Flux folder has no text encoders");
  ++*encoders.encoder_runs;
  Conditioning conditioning;
  // On the host, as embeddings read from a file or the store are (the pipeline moves them).
  conditioning.pooled_prompt_embeds =
      encoders.text_encoder->forward(ids_tensor(tokens.clip_ids)).pooler_output[0].to(at::kCPU, at::kFloat).contiguous();
  // FluxPipeline passes no attention mask to T5: the padding is attended to.
  conditioning.prompt_embeds =
      encoders.text_encoder_2->forward(ids_tensor(tokens.t5_ids))[0].to(at::kCPU, at::kFloat).contiguous();
  conditioning.source = "the prompt";
  return conditioning;
}

std::optional<Conditioning> find_prompt_embeddings(engine::CaptureStore& store, const FluxTextEncoders& encoders,
                                                   const FluxPromptTokens& tokens) {
  const std::shared_ptr<const engine::Capture> capture = store.find(prompt_capture_id(encoders, tokens));
  if (!capture || !capture->contains(kPromptEmbedsEntry) || !capture->contains(kPooledEntry)) return std::nullopt;
  try {
    Conditioning conditioning;
    conditioning.prompt_embeds =
        capture->read_rows(kPromptEmbedsEntry, at::arange(static_cast<int64_t>(tokens.t5_ids.size()), at::kLong));
    conditioning.pooled_prompt_embeds = capture->read_rows(kPooledEntry, at::zeros({1}, at::kLong))[0];
    conditioning.source = "the prompt";
    return conditioning;
  } catch (const Error&) {
    return std::nullopt;  // a damaged entry: encode again
  }
}

void store_prompt_embeddings(engine::CaptureStore& store, const FluxTextEncoders& encoders,
                             const FluxPromptTokens& tokens, const Conditioning& conditioning) {
  if (!store.why_unwritable().empty()) return;
  std::unique_ptr<engine::CaptureWriter> writer = store.begin(prompt_capture_id(encoders, tokens));
  writer->put(kPromptEmbedsEntry, conditioning.prompt_embeds);
  writer->put(kPooledEntry, conditioning.pooled_prompt_embeds.unsqueeze(0));
  writer->commit();
}

FluxPromptEncoding flux_prompt_conditioning(engine::CaptureStore& store, const FluxTextEncoders& encoders,
                                            const std::string& prompt, int max_sequence_length) {
  FluxPromptEncoding encoding;
  const FluxPromptTokens tokens = tokenize_flux_prompt(encoders, prompt, max_sequence_length);
  encoding.truncated = tokens.truncated;
  if (std::optional<Conditioning> stored = find_prompt_embeddings(store, encoders, tokens)) {
    encoding.cache_hit = true;
    encoding.conditioning = std::move(*stored);
    return encoding;
  }
  encoding.conditioning = encode_flux_prompt(encoders, tokens);
  encoding.store_error = store.why_unwritable();
  if (!encoding.store_error.empty()) return encoding;
  try {
    store_prompt_embeddings(store, encoders, tokens, encoding.conditioning);
  } catch (const Error& error) {
    encoding.store_error = error.what();  // a full disk costs only the next edit an encoding
  }
  return encoding;
}

}  // namespace flashps
