// The components of a single-file model, each from where the user keeps it: the file (or
// diffusers component folder) given with its flag (--vae, --text-encoder, --text-encoder-2),
// else the model file's own keys, else an error saying which flag to pass.
#pragma once
#include <ATen/Tensor.h>

#include <memory>
#include <string>

#include "models/clip/clip_text_model.h"
#include "models/t5/t5_encoder_model.h"
#include "models/unet/unet_model.h"
#include "models/vae/image_autoencoder.h"
#include "pipeline/edit_types.h"
#include "pipeline/family_registry.h"

namespace flashps {

class ScratchFolder;

// "vae", "text_encoder", "text_encoder_2": the flag that gives it ("--vae", ...).
std::string component_flag(const std::string& component);
// Whether the model can have `component` at all: given with its flag or held by the file.
bool has_component(const ModelSource& source, const std::string& component);

// The VAE: --vae (a file or a diffusers vae/ folder), else the file's VAE keys. NotFoundError
// "<file>: no VAE in this file: pass --vae FILE" when neither.
std::shared_ptr<ImageAutoencoder> load_vae_component(const ModelSource& source, at::ScalarType dtype);

// The CLIP text encoder `component` ("text_encoder", or SDXL's "text_encoder_2"): its flag's file
// or folder, else the model file's keys (Hugging Face or OpenCLIP), with the model's config.
ClipTextModel load_clip_component(const ModelSource& source, const std::string& component, at::ScalarType dtype);
// Flux's T5 encoder ("text_encoder_2").
T5EncoderModel load_t5_component(const ModelSource& source, at::ScalarType dtype);
// The UNet of a Stable Diffusion file (LDM keys under model.diffusion_model.).
UNet2DConditionModel load_unet_component(const ModelSource& source, at::ScalarType dtype);

// The stored prompt embeddings of a FlashPS-written text-free file ("flashps.empty_prompt.*");
// undefined when it has none.
Conditioning carried_empty_prompt(const ModelSource& source);

// The folder holding `tokenizer` ("tokenizer" or "tokenizer_2") of a single-file model: under
// --tokenizers, else beside the model file. NotFoundError naming what to pass when neither has it.
std::string tokenizer_folder(const ModelSource& source, const std::string& tokenizer);

// A tokenizer folder to load from: the files a FlashPS-written model carries, written to a
// temporary folder removed with this object; else tokenizer_folder().
class TokenizerFolder {
 public:
  TokenizerFolder(const ModelSource& source, const std::string& tokenizer);
  ~TokenizerFolder();
  TokenizerFolder(const TokenizerFolder&) = delete;
  TokenizerFolder& operator=(const TokenizerFolder&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::unique_ptr<ScratchFolder> scratch_;  // the carried files, when they are used
};

}  // namespace flashps
