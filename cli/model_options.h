// The model options every command that loads a model takes, written once: --model (a diffusers
// folder, a single .safetensors checkpoint or a .gguf file) and what may complete a single file:
// --vae, --text-encoder, --text-encoder-2, --model-type, --tokenizers.
#pragma once
#include <CLI/CLI.hpp>
#include <flashps/flashps.hpp>

#include <string>

namespace flashps::cli {

struct ModelPathOptions {
  std::string model;  // empty: the bundled model
  std::string vae, text_encoder, text_encoder_2, model_type, tokenizers;
  // Whether anything beside --model was given (then the model opens through sdk::Model).
  bool has_component_options() const {
    return !vae.empty() || !text_encoder.empty() || !text_encoder_2.empty() || !model_type.empty() ||
           !tokenizers.empty();
  }
};

// Adds --model and the single-file options to `command`.
void add_model_options(CLI::App* command, ModelPathOptions& options);

// The wrapper's ModelOptions with these files (precision, device and progress set by the caller).
sdk::ModelOptions model_open_options(const ModelPathOptions& options);

}  // namespace flashps::cli
