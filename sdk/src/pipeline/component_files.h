// The components of a single-file model, each from where the user keeps it: the file (or
// diffusers component folder) given with its flag (--vae, --text-encoder, --text-encoder-2),
// else the model file's own keys, else an error saying which flag to pass.
#pragma once
#include <ATen/Tensor.h>

#include <memory>
#include <string>

#include "models/vae/image_autoencoder.h"
#include "pipeline/edit_types.h"
#include "pipeline/family_registry.h"

namespace flashps {

// "vae", "text_encoder", "text_encoder_2": the flag that gives it ("--vae", ...).
std::string component_flag(const std::string& component);
// Whether the model can have `component` at all: given with its flag or held by the file.
bool has_component(const ModelSource& source, const std::string& component);

// The VAE: --vae (a file or a diffusers vae/ folder), else the file's VAE keys. NotFoundError
// "<file>: no VAE in this file: pass --vae FILE" when neither.
std::shared_ptr<ImageAutoencoder> load_vae_component(const ModelSource& source, at::ScalarType dtype);

// The stored prompt embeddings of a FlashPS-written text-free file ("flashps.empty_prompt.*");
// undefined when it has none.
Conditioning carried_empty_prompt(const ModelSource& source);

// The folder holding `tokenizer` ("tokenizer" or "tokenizer_2") of a single-file model: under
// --tokenizers, else beside the model file. NotFoundError naming what to pass when neither has it.
std::string tokenizer_folder(const ModelSource& source, const std::string& tokenizer);

}  // namespace flashps
