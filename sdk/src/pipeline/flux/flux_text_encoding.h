// Prompt encoding of Flux folders, as diffusers' FluxPipeline / FluxFillPipeline do it:
//   pooled_prompt_embeds = text_encoder(tokenizer(prompt, 77)).pooler_output             [768]
//   prompt_embeds = text_encoder_2(tokenizer_2(prompt, padding max_length,
//                                  max_sequence_length)).last_hidden_state               [T, 4096]
// (CLIP-L and T5 v1.1 XXL in real folders; text_ids are zeros, which the transformer assumes).
// Encoded prompts are kept in the pipeline's capture store under the encoders' fingerprint and
// the token ids, so an edit with a prompt seen before runs neither encoder.
#pragma once
#include <ATen/Tensor.h>

#include <atomic>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/capture.h"
#include "models/clip/clip_text_model.h"
#include "models/clip/clip_tokenizer.h"
#include "models/t5/t5_encoder_model.h"
#include "models/t5/t5_tokenizer.h"
#include "pipeline/edit_types.h"

namespace flashps {

struct FluxTextEncoders {
  static constexpr int kDefaultMaxSequenceLength = 512;  // FluxPipeline's default

  std::optional<ClipTokenizer> tokenizer;
  ClipTextModel text_encoder{nullptr};
  std::optional<T5Tokenizer> tokenizer_2;
  T5EncoderModel text_encoder_2{nullptr};
  std::string fingerprint;  // configs and weight headers of both encoders, and the tokenizer files
  int max_sequence_length = kDefaultMaxSequenceLength;  // model_index.json "_flashps_max_sequence_length"
  // How many prompts the encoders have run on (not counting store hits): tests and benchmarks.
  std::shared_ptr<std::atomic<int>> encoder_runs = std::make_shared<std::atomic<int>>(0);

  bool present() const { return static_cast<bool>(text_encoder_2); }
};

// Loads text_encoder/, tokenizer/, text_encoder_2/ and tokenizer_2/ of a Flux folder when
// model_index.json names text encoders (a null entry, or none, means a text-free folder: returns
// encoders with present() false). A folder that names them but lacks one of the four, or holds
// a broken one, is an error naming the missing folder or file.
FluxTextEncoders load_flux_text_encoders(const std::string& model_dir, const nlohmann::json& model_index,
                                         const std::string& model_index_path, at::ScalarType dtype);

struct FluxPromptTokens {
  std::vector<int64_t> clip_ids;  // 77 ids: start, text, end, padding
  std::vector<int64_t> t5_ids;    // max_sequence_length ids: text, </s>, padding
  bool truncated = false;         // the prompt did not fit one of the tokenizers
};

// max_sequence_length 0: the encoders' default; otherwise 1..512 (InvalidArgumentError).
FluxPromptTokens tokenize_flux_prompt(const FluxTextEncoders& encoders, const std::string& prompt,
                                      int max_sequence_length = 0);

// Runs both encoders: prompt_embeds [T, D] and pooled_prompt_embeds [P], float32.
Conditioning encode_flux_prompt(const FluxTextEncoders& encoders, const FluxPromptTokens& tokens);

// The store's copy of these tokens' embeddings (read back bit-exact), or nullopt.
std::optional<Conditioning> find_prompt_embeddings(engine::CaptureStore& store, const FluxTextEncoders& encoders,
                                                   const FluxPromptTokens& tokens);
// Keeps them for later edits; a store that takes no captures (read-only) keeps nothing.
void store_prompt_embeddings(engine::CaptureStore& store, const FluxTextEncoders& encoders,
                             const FluxPromptTokens& tokens, const Conditioning& conditioning);

struct FluxPromptEncoding {
  Conditioning conditioning;
  bool cache_hit = false;   // read from the store: no encoder ran
  bool truncated = false;   // the prompt was longer than a tokenizer takes
  std::string store_error;  // why the embeddings were not kept (read-only store, full disk); the edit goes on
};

// The embeddings of `prompt`: from the store when encoded before, else encoded and stored.
FluxPromptEncoding flux_prompt_conditioning(engine::CaptureStore& store, const FluxTextEncoders& encoders,
                                            const std::string& prompt, int max_sequence_length = 0);

}  // namespace flashps
