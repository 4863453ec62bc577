// The text encoders of a Flux folder with seeded random weights, laid out as a real FLUX.1-Fill
// download ships them: text_encoder/ (CLIPTextModel), tokenizer/ (CLIP BPE files),
// text_encoder_2/ (T5EncoderModel in shards with model.safetensors.index.json) and
// tokenizer_2/spiece.model (a SentencePiece unigram model). For tests and benchmarks of the
// prompt path; the pictures they steer mean nothing.
#pragma once
#include <cstdint>
#include <string>

namespace flashps {

struct RandomFluxTextEncodersSpec {
  int64_t clip_hidden_size = 64;  // = the transformer's pooled_projection_dim
  int64_t t5_d_model = 128;       // = the transformer's joint_attention_dim
  int64_t t5_layers = 2, t5_heads = 2, t5_d_ff = 256;
  int t5_shards = 2;
  uint64_t seed = 0;
};

// Writes the four folders into `model_dir` (model_index.json is the caller's).
void write_random_flux_text_encoders(const std::string& model_dir, const RandomFluxTextEncodersSpec& spec);

// A byte-level CLIP vocabulary without merges: every byte alone and at a word's end ("</w>"),
// start and end tokens at 998 and 999, so every id is below 1000.
void write_byte_level_clip_tokenizer(const std::string& dir);

// A character-level unigram spiece.model (T5's special ids: pad 0, eos 1, unk 2): letters,
// digits and punctuation, alone and after the word boundary "▁", and a few whole words.
std::string character_level_spiece_model();

}  // namespace flashps
