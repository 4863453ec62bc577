// Writes a complete Flux-architecture inpainting model folder (diffusers layout) with seeded
// random weights: for tests, benchmarks, as the untrained starting point of training, and as the
// shipped library's fallback when the bundled model is missing (app/default_model.cpp).
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "models/flux/flux_config.h"

namespace flashps {

struct RandomFluxModelSpec {
  FluxConfig transformer;
  nlohmann::json vae_config;        // diffusers AutoencoderKL config
  nlohmann::json scheduler_config;  // FlowMatchEulerDiscreteScheduler config
  int64_t text_tokens = 16;         // length of the stored empty-prompt embeddings
  // Also write text_encoder/, tokenizer/, text_encoder_2/, tokenizer_2/ (models/random/random_text_encoders.h),
  // so the folder edits from a text prompt; model_index.json then sets the T5 length to
  // `max_sequence_length` (FluxPipeline's 512 would only slow a tiny model down).
  bool text_encoders = false;
  int max_sequence_length = 32;
  uint64_t seed = 0;
};

// A small Fill model that runs a 256x256 edit in seconds on a CPU.
RandomFluxModelSpec small_fill_model_spec();

void write_random_flux_model(const std::string& dir, const RandomFluxModelSpec& spec);

}  // namespace flashps
