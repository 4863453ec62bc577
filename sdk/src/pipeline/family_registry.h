// The model families FlashPS knows, one table: how each is recognised, what it is called, and how
// it loads. Every part of the SDK that needs a family asks here (one detector): the C API's
// editors and engines, the profiler, the benchmarks.
//
// Adding a family: its folder of pipeline code (implementing pipeline/inpaint_model.h) and one line
// in built_in_families() (family_registry.cpp). Programs and tests may register more at run time.
#pragma once
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pipeline/checkpoint_source.h"
#include "pipeline/inpaint_model.h"
#include "pipeline/model_type.h"

namespace flashps {

// A model as detection sees it, read once: a diffusers folder's model_index.json and which
// component configs it has, or a single file (.safetensors / .gguf) with its tensor listing,
// what it was recognised as (pipeline/model_type.h) and the component files given beside it.
// A single file is seen through the diffusers folder it stands for: its model_index.json and
// configs are those it carries (files FlashPS wrote) or its release's (built-in tables).
struct ModelSource {
  std::string path;
  nlohmann::json index;            // model_index.json; null when the folder has none
  std::string pipeline_class;      // its "_class_name"; "" when none
  std::shared_ptr<const CheckpointSource> file;  // a single-file model; null for a folder
  RecognisedFile recognised;                     // what the file is (single files only)
  ModelFiles files;                              // given beside it

  bool is_file() const { return static_cast<bool>(file); }
  // "_class_name" of <component>/config.json ("" when the file is absent or names none).
  std::string component_class(const std::string& component) const;
  bool has_file(const std::string& relative) const;
  // A JSON file of the model's diffusers layout ("vae/config.json"): the folder's, the single
  // file's carried copy, or its release's; null when there is none.
  nlohmann::json config(const std::string& relative) const;
  // Where config(relative) came from, for errors: "<file> (flashps.files: vae/config.json)", ...
  std::string config_source(const std::string& relative) const;

  // NotFoundError / CorruptDataError; for a file also UnsupportedError (not a model FlashPS
  // loads, pickles) and InvalidArgumentError (an unknown --model-type, component files that do
  // not exist or are given with a folder).
  static ModelSource read(const std::string& path, const ModelFiles& files = {});
};

struct FamilyEntry {
  std::string name;          // stable identifier: "flux", "stable-diffusion"
  std::string display_name;  // for people: "Flux", "Stable Diffusion"
  int c_family = 0;          // flashps_model_family (0: none of the C API's enumerators)
  std::string accepts;       // what it loads, for the message that refuses a model
  std::function<bool(const ModelSource&)> recognises;
  std::function<std::shared_ptr<InpaintModel>(const ModelSource&, const ModelLoadOptions&)> load;
};

// Every family, built-in first, then those registered, in order.
std::vector<FamilyEntry> model_families();
// Adds a family (a name already taken is refused with InvalidArgumentError). Thread-safe.
void register_model_family(FamilyEntry family);
// Removes a family registered at run time (tests); built-in ones stay.
void unregister_model_family(const std::string& name);

// The family that loads `path`. A model no family accepts is refused with UnsupportedError naming
// what it is (e.g. a Stable Diffusion 3 or Flux Kontext folder) and what is supported; a missing
// folder is NotFoundError, an unreadable model_index.json CorruptDataError.
FamilyEntry detect_model_family(const std::string& path);
FamilyEntry detect_model_family(const ModelSource& source);
// detect_model_family, then that family's load (with options.files beside a single file).
std::shared_ptr<InpaintModel> load_model(const std::string& path, const ModelLoadOptions& options = {});

}  // namespace flashps
