#include "pipeline/model_description.h"

#include <filesystem>

#include "models/loading/model_files.h"
#include "pipeline/component_files.h"
#include "pipeline/family_registry.h"
#include "pipeline/flux/flux_inpaint_pipeline.h"
#include "pipeline/stable_diffusion/sd_inpaint_pipeline.h"
#include "pipeline/single_file_fingerprint.h"

namespace flashps {
namespace fs = std::filesystem;
namespace {

int64_t described_element_count(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t size : shape) count *= size;
  return count;
}

struct DescribedTensorGroup {
  std::string name, prefix;
  int64_t tensors = 0, parameters = 0;
  std::map<std::string, int64_t> stored_as;
  nlohmann::json to_json() const {
    return {{"group", name}, {"prefix", prefix}, {"tensors", tensors}, {"parameters", parameters},
            {"stored_as", stored_as}};
  }
};

// Groups a file's tensors by the component prefixes recognition found; the rest is "other".
std::vector<DescribedTensorGroup> group_tensors(const ModelSource& source) {
  const FileComponents& held = source.recognised.components;
  const std::string denoiser = std::string(source.recognised.type->family) == "flux" ? "transformer" : "unet";
  std::vector<DescribedTensorGroup> groups;
  const std::pair<std::string, const std::optional<std::string>*> parts[] = {
      {"vae", &held.vae}, {"text_encoder", &held.text_encoder}, {"text_encoder_2", &held.text_encoder_2},
      {"flashps.empty_prompt", nullptr}, {denoiser, &held.denoiser}};
  for (const auto& [name, prefix] : parts) {
    if (prefix && !*prefix) continue;
    groups.push_back({name, prefix ? **prefix : "flashps.empty_prompt."});
  }
  groups.push_back({"other", ""});
  for (const auto& [key, entry] : source.file->tensors->entries()) {
    // The longest matching prefix wins (the denoiser's may be "", the whole file).
    DescribedTensorGroup* best = &groups.back();
    for (DescribedTensorGroup& group : groups)
      if (group.name != "other" && key.compare(0, group.prefix.size(), group.prefix) == 0 &&
          (best->name == "other" || group.prefix.size() > best->prefix.size()))
        best = &group;
    ++best->tensors;
    best->parameters += described_element_count(entry.shape);
    ++best->stored_as[entry.stored_as];
  }
  std::vector<DescribedTensorGroup> used;
  for (DescribedTensorGroup& group : groups)
    if (group.tensors > 0) used.push_back(std::move(group));
  return used;
}

int64_t component_file_parameters(const std::string& path) {
  if (fs::is_directory(path)) return 0;
  int64_t parameters = 0;
  for (const auto& [key, entry] : open_checkpoint_source(path)->tensors->entries()) parameters += described_element_count(entry.shape);
  return parameters;
}

nlohmann::json describe_component(const ModelSource& source, const std::string& component, bool needed) {
  const std::string& given = component == "vae"            ? source.files.vae
                             : component == "text_encoder" ? source.files.text_encoder
                                                           : source.files.text_encoder_2;
  const FileComponents& held = source.recognised.components;
  const std::optional<std::string>& prefix = component == "vae"            ? held.vae
                                             : component == "text_encoder" ? held.text_encoder
                                                                           : held.text_encoder_2;
  nlohmann::json described = {{"needed", needed}};
  if (!given.empty()) {
    described["present"] = true;
    described["from"] = given;
    described["parameters"] = component_file_parameters(given);
  } else if (prefix) {
    described["present"] = true;
    described["from"] = "the model file (keys under \"" + *prefix + "\")";
  } else {
    described["present"] = false;
    described["flag"] = component_flag(component);
    const std::string what = component == "vae" ? "VAE" : component == "text_encoder" ? "CLIP-L text encoder"
                             : std::string(source.recognised.type->family) == "flux" ? "T5 text encoder"
                                                                                      : "second text encoder";
    described["message"] = "no " + what + " in this file: pass " + component_flag(component) + " FILE";
  }
  return described;
}

bool index_names_component(const nlohmann::json& index, const char* component) {
  return index.is_object() && index.contains(component) && !index[component].is_null();
}

nlohmann::json describe_single_file(const ModelSource& source) {
  const RecognisedFile& recognised = source.recognised;
  nlohmann::json described;
  described["path"] = source.path;
  described["format"] = source.file->format;
  described["family"] = recognised.type->family;
  described["variant"] = recognised.type->name;
  described["variant_from"] = recognised.type_given ? "--model-type" : "tensor names and shapes";
  described["description"] = recognised.type->description;
  described["written_by_flashps"] = recognised.written_by_flashps;
  described["configs"] = recognised.written_by_flashps ? std::string("carried in the file (flashps.files)")
                                                       : std::string("built in: ") + recognised.type->release;
  described["layout"] = recognised.layout;
  nlohmann::json groups = nlohmann::json::array();
  int64_t parameters = 0;
  for (const DescribedTensorGroup& group : group_tensors(source)) {
    groups.push_back(group.to_json());
    parameters += group.parameters;
  }
  described["tensor_groups"] = groups;
  nlohmann::json components;
  components[std::string(recognised.type->family) == "flux" ? "transformer" : "unet"] = {
      {"needed", true}, {"present", true}, {"from", "the model file"}};
  components["vae"] = describe_component(source, "vae", true);
  for (const char* encoder : {"text_encoder", "text_encoder_2"}) {
    const bool needed = index_names_component(source.index, encoder);
    if (!needed && !has_component(source, encoder)) continue;
    components[encoder] = describe_component(source, encoder, needed);
    if (components[encoder].contains("parameters")) parameters += components[encoder]["parameters"].get<int64_t>();
  }
  if (components["vae"].contains("parameters")) parameters += components["vae"]["parameters"].get<int64_t>();
  if (!recognised.written_by_flashps)
    for (const char* tokenizer : {"tokenizer", "tokenizer_2"}) {
      if (!index_names_component(source.index, tokenizer)) continue;
      try {
        components[tokenizer] = {{"needed", true}, {"present", true}, {"from", tokenizer_folder(source, tokenizer)}};
      } catch (const std::exception& missing) {
        components[tokenizer] = {{"needed", true}, {"present", false}, {"flag", "--tokenizers"},
                                 {"message", missing.what()}};
      }
    }
  described["components"] = components;
  described["parameters"] = parameters;
  described["fingerprint"] = single_file_fingerprint(source);
  return described;
}

nlohmann::json describe_folder(const ModelSource& source) {
  const FamilyEntry family = detect_model_family(source);
  nlohmann::json described;
  described["path"] = source.path;
  described["format"] = "folder";
  described["family"] = family.name;
  described["variant"] = source.pipeline_class;
  described["variant_from"] = "model_index.json";
  described["description"] = family.display_name + " (diffusers folder)";
  described["configs"] = "the folder's";
  nlohmann::json groups = nlohmann::json::array(), components = nlohmann::json::object();
  int64_t parameters = 0;
  for (const char* component : {"transformer", "unet", "vae", "text_encoder", "text_encoder_2"}) {
    const fs::path folder = fs::path(source.path) / component;
    if (!fs::is_directory(folder)) continue;
    DescribedTensorGroup group{component, std::string(component) + "/"};
    for (const char* base : {"diffusion_pytorch_model", "model"}) {
      if (!fs::exists(folder / (std::string(base) + ".safetensors")) &&
          !fs::exists(folder / (std::string(base) + ".safetensors.index.json")))
        continue;
      for (const auto& weights : open_component_weights(folder.string(), base))
        for (const TensorInfo& tensor : weights->tensors()) {
          ++group.tensors;
          group.parameters += tensor.element_count();
          ++group.stored_as[dtype_safetensors_name(tensor.dtype)];
        }
      break;
    }
    parameters += group.parameters;
    groups.push_back(group.to_json());
    components[component] = {{"needed", true}, {"present", true}, {"from", folder.string()}};
  }
  described["tensor_groups"] = groups;
  described["components"] = components;
  described["parameters"] = parameters;
  // As the family's loader computes it; a family registered at run time has its own (null here).
  described["fingerprint"] = nullptr;
  if (family.name == "flux") described["fingerprint"] = FluxInpaintPipeline::folder_fingerprint(source.path);
  if (family.name == "stable-diffusion") described["fingerprint"] = SDInpaintPipeline::folder_fingerprint(source.path);
  return described;
}

}  // namespace

nlohmann::json inspect_model(const std::string& path, const ModelFiles& files) {
  const ModelSource source = ModelSource::read(path, files);
  if (!source.is_file()) return describe_folder(source);
  detect_model_family(source);  // the registry accepts it (a family registered for it, or refused)
  return describe_single_file(source);
}

}  // namespace flashps
