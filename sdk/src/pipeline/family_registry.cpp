#include "pipeline/family_registry.h"

#include <algorithm>
#include <filesystem>
#include <mutex>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "pipeline/flux/flux_family.h"
#include "pipeline/stable_diffusion/sd_family.h"

namespace flashps {
namespace fs = std::filesystem;
namespace {

// One line per family. Order matters only when two families could accept the same model.
std::vector<FamilyEntry> built_in_families() {
  return {
      flux_family(),              // pipeline/flux/flux_family.cpp
      stable_diffusion_family(),  // pipeline/stable_diffusion/sd_family.cpp
  };
}

// diffusers pipelines that look like a supported family (same name prefix, or the same
// transformer class) but are another kind of model: named, so the refusal says what they are.
struct KnownUnsupported {
  const char* class_prefix;
  const char* what;
};
constexpr KnownUnsupported kKnownUnsupported[] = {
    {"StableDiffusion3", "Stable Diffusion 3 (an SD3Transformer2DModel MMDiT, not a UNet)"},
    {"FluxKontext", "Flux Kontext (edits guided by a reference image, not a mask)"},
    {"FluxControl", "Flux Control (structure given as extra input channels)"},
    {"FluxPriorRedux", "Flux Redux (an image-prompt adapter)"},
    {"StableDiffusionXLInstructPix2Pix", "InstructPix2Pix (instruction editing, an 8-channel UNet)"},
    {"StableDiffusionInstructPix2Pix", "InstructPix2Pix (instruction editing, an 8-channel UNet)"},
    {"StableDiffusionUpscale", "a Stable Diffusion upscaler"},
    {"StableDiffusionLatentUpscale", "a Stable Diffusion upscaler"},
    {"StableDiffusionDepth2Img", "Stable Diffusion depth-to-image (a 5-channel UNet)"},
    {"StableDiffusionControlNet", "a ControlNet pipeline (ControlNet is not supported yet)"},
    {"StableDiffusionXLControlNet", "a ControlNet pipeline (ControlNet is not supported yet)"},
};

std::mutex& registry_mutex() {
  static std::mutex mutex;
  return mutex;
}
std::vector<FamilyEntry>& registered() {
  static std::vector<FamilyEntry> families;
  return families;
}

std::string supported_list(const std::vector<FamilyEntry>& families) {
  std::string list;
  for (const FamilyEntry& family : families) list += (list.empty() ? "" : "; ") + family.accepts;
  return "supported: " + list;
}

}  // namespace

std::string ModelSource::component_class(const std::string& component) const {
  const fs::path config = fs::path(path) / component / "config.json";
  if (!fs::is_regular_file(config)) return "";
  const nlohmann::json json = read_json_file(config.string());
  return json.is_object() ? json.value("_class_name", std::string()) : std::string();
}

bool ModelSource::has_file(const std::string& relative) const { return fs::exists(fs::path(path) / relative); }

ModelSource ModelSource::read(const std::string& path) {
  if (!fs::is_directory(path)) throw NotFoundError(path + ": model folder does not exist");
  ModelSource source;
  source.path = path;
  const fs::path index_path = fs::path(path) / "model_index.json";
  if (fs::exists(index_path)) {
    source.index = read_json_file(index_path.string());
    if (!source.index.is_object()) throw CorruptDataError(index_path.string() + ": must hold a JSON object");
    const auto found = source.index.find("_class_name");
    if (found != source.index.end() && found->is_string()) source.pipeline_class = found->get<std::string>();
  }
  return source;
}

std::vector<FamilyEntry> model_families() {
  std::vector<FamilyEntry> families = built_in_families();
  std::lock_guard<std::mutex> lock(registry_mutex());
  families.insert(families.end(), registered().begin(), registered().end());
  return families;
}

void register_model_family(FamilyEntry family) {
  if (family.name.empty() || !family.recognises || !family.load)
    throw InvalidArgumentError("register_model_family: a family needs a name, recognises and load");
  for (const FamilyEntry& known : model_families())
    if (known.name == family.name)
      throw InvalidArgumentError("register_model_family: a family named \"" + family.name + "\" is already registered");
  std::lock_guard<std::mutex> lock(registry_mutex());
  registered().push_back(std::move(family));
}

void unregister_model_family(const std::string& name) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  auto& families = registered();
  families.erase(std::remove_if(families.begin(), families.end(),
                                [&](const FamilyEntry& family) { return family.name == name; }),
                 families.end());
}

FamilyEntry detect_model_family(const std::string& path) {
  const ModelSource source = ModelSource::read(path);
  const std::vector<FamilyEntry> families = model_families();
  for (const KnownUnsupported& known : kKnownUnsupported)
    if (source.pipeline_class.rfind(known.class_prefix, 0) == 0)
      throw UnsupportedError(path + ": " + source.pipeline_class + " is " + known.what +
                             ", which FlashPS does not support (" + supported_list(families) + ")");
  for (const FamilyEntry& family : families)
    if (family.recognises(source)) return family;
  if (!source.pipeline_class.empty())
    throw UnsupportedError(path + "/model_index.json: pipeline class \"" + source.pipeline_class +
                           "\" is not one FlashPS supports (" + supported_list(families) + ")");
  throw NotFoundError(path + ": not a model folder: no model_index.json naming a pipeline, and no family recognises "
                      "its files (no transformer/config.json; " + supported_list(families) + ")");
}

std::shared_ptr<InpaintModel> load_model(const std::string& path, const ModelLoadOptions& options) {
  const FamilyEntry family = detect_model_family(path);
  return family.load(ModelSource::read(path), options);
}

void check_request_for(const InpaintModel& model, const EditRequest& request) {
  const ModelCapabilities capabilities = model.capabilities();
  if (request.mode == CacheMode::kv && !capabilities.kv_replay)
    throw UnsupportedError(model.model_dir() + ": cache mode 'kv' does not apply to " + model.family().display_name +
                           " models" + (capabilities.why_no_kv.empty() ? "" : ": " + capabilities.why_no_kv) +
                           "; use 'hidden' or 'auto' (FLASHPS_CACHE_HIDDEN, FLASHPS_CACHE_AUTO)");
  if (request.mode == CacheMode::hidden && !capabilities.hidden_replay)
    throw UnsupportedError(model.model_dir() + ": cache mode 'hidden' does not apply to " +
                           model.family().display_name +
                           " models; use 'kv' or 'auto' (FLASHPS_CACHE_KV, FLASHPS_CACHE_AUTO)");
}

}  // namespace flashps
