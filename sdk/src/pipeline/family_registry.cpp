#include "pipeline/family_registry.h"

#include <algorithm>
#include <filesystem>
#include <mutex>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "pipeline/flux/flux_family.h"
#include "pipeline/release_configs.h"
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

// A single file: recognised from its tensors; its model_index.json is the one it carries (files
// FlashPS wrote) or its release's.
ModelSource read_single_file(const std::string& path, const ModelFiles& files) {
  const std::pair<const char*, const std::string*> given[] = {
      {"--vae", &files.vae}, {"--text-encoder", &files.text_encoder}, {"--text-encoder-2", &files.text_encoder_2}};
  for (const auto& [flag, file] : given)
    if (!file->empty() && !fs::exists(*file)) throw NotFoundError(std::string(flag) + " " + *file + ": does not exist");
  if (!files.tokenizers_dir.empty() && !fs::is_directory(files.tokenizers_dir))
    throw NotFoundError("--tokenizers " + files.tokenizers_dir + ": not a folder");
  ModelSource source;
  source.path = path;
  source.files = files;
  source.file = open_checkpoint_source(path);
  source.recognised = recognise_checkpoint(*source.file, files.model_type);
  source.index = source.config("model_index.json");
  if (source.index.is_null()) source.index = release_file(*source.recognised.type, "model_index.json");
  if (!source.index.is_object())
    throw CorruptDataError(source.config_source("model_index.json") + ": must hold a JSON object");
  source.pipeline_class = source.index.value("_class_name", std::string());
  return source;
}

}  // namespace

std::string ModelSource::component_class(const std::string& component) const {
  if (is_file()) {
    const nlohmann::json json = config(component + "/config.json");
    return json.is_object() ? json.value("_class_name", std::string()) : std::string();
  }
  const fs::path config = fs::path(path) / component / "config.json";
  if (!fs::is_regular_file(config)) return "";
  const nlohmann::json json = read_json_file(config.string());
  return json.is_object() ? json.value("_class_name", std::string()) : std::string();
}

bool ModelSource::has_file(const std::string& relative) const {
  if (is_file()) return !config(relative).is_null() || !file->carried_text(relative).empty();
  return fs::exists(fs::path(path) / relative);
}

nlohmann::json ModelSource::config(const std::string& relative) const {
  if (!is_file()) {
    const fs::path json = fs::path(path) / relative;
    return fs::exists(json) ? read_json_file(json.string()) : nlohmann::json(nullptr);
  }
  if (recognised.written_by_flashps) return file->carried_json(relative);
  return release_file(*recognised.type, relative);
}

std::string ModelSource::config_source(const std::string& relative) const {
  if (!is_file()) return (fs::path(path) / relative).string();
  if (recognised.written_by_flashps) return path + " (flashps.files: " + relative + ")";
  return path + " (" + recognised.type->release + "'s " + relative + ", built in)";
}

ModelSource ModelSource::read(const std::string& path, const ModelFiles& files) {
  if (fs::is_regular_file(path)) return read_single_file(path, files);
  if (!fs::is_directory(path)) throw NotFoundError(path + ": model folder or file does not exist");
  if (!files.empty())
    throw InvalidArgumentError(path + ": --vae, --text-encoder, --text-encoder-2, --model-type and --tokenizers "
                               "apply to single-file models; a diffusers folder's components are its subfolders");
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

FamilyEntry detect_model_family(const std::string& path) { return detect_model_family(ModelSource::read(path)); }

FamilyEntry detect_model_family(const ModelSource& source) {
  const std::string& path = source.path;
  const std::vector<FamilyEntry> families = model_families();
  for (const KnownUnsupported& known : kKnownUnsupported)
    if (source.pipeline_class.rfind(known.class_prefix, 0) == 0)
      throw UnsupportedError(path + ": " + source.pipeline_class + " is " + known.what +
                             ", which FlashPS does not support (" + supported_list(families) + ")");
  for (const FamilyEntry& family : families)
    if (family.recognises(source)) return family;
  if (!source.pipeline_class.empty())
    throw UnsupportedError((source.is_file() ? source.config_source("model_index.json") : path + "/model_index.json") +
                           ": pipeline class \"" + source.pipeline_class +
                           "\" is not one FlashPS supports (" + supported_list(families) + ")");
  throw NotFoundError(path + ": not a model folder: no model_index.json naming a pipeline, and no family recognises "
                      "its files (no transformer/config.json; " + supported_list(families) + ")");
}

std::shared_ptr<InpaintModel> load_model(const std::string& path, const ModelLoadOptions& options) {
  const ModelSource source = ModelSource::read(path, options.files);
  return detect_model_family(source).load(source, options);
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
