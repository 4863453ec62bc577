// What a single model file is, recognised from its tensor names and shapes (as diffusers'
// single-file loader decides, infer_diffusers_model_type), and the one table of model types
// `--model-type` names. A file of a family FlashPS does not load (SD3, a LoRA, a VAE or text
// encoder alone, Flux Depth/Canny) is refused here, saying what it looks like.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "pipeline/checkpoint_source.h"

namespace flashps {

struct ModelType {
  const char* name;            // "sd15-inpaint": what --model-type takes
  const char* family;          // the family registry's name: "stable-diffusion", "flux"
  const char* pipeline_class;  // the diffusers pipeline of its release: its model_index.json _class_name
  const char* release;         // the release whose configs it takes (diffusers' single-file default)
  const char* description;     // for people
};

// Every type, in the order help text lists them.
const std::vector<ModelType>& model_types();
// nullptr when `name` is none of them.
const ModelType* find_model_type(const std::string& name);
// "sd15, sd15-inpaint, ..." for help and errors.
std::string model_type_names();

// Where each component of a file lies: a key prefix ("" = the whole file), or nullopt when the
// file lacks it.
struct FileComponents {
  std::optional<std::string> denoiser, vae, text_encoder, text_encoder_2;
};

struct RecognisedFile {
  const ModelType* type = nullptr;  // never null after recognition
  bool type_given = false;          // from --model-type rather than the tensors
  bool written_by_flashps = false;  // carries its configs ("flashps.files")
  FileComponents components;
  std::string layout;  // what the keys look like, for `model info`: "LDM (original Stable Diffusion)", ...
};

// Recognises `file`; `model_type` ("" = recognise) overrides the variant within the family the
// tensors show. Throws UnsupportedError naming what the file looks like when no supported type
// fits, InvalidArgumentError for an unknown --model-type or one of another family.
RecognisedFile recognise_checkpoint(const CheckpointSource& file, const std::string& model_type = "");

}  // namespace flashps
