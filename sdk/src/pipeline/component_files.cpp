#include "pipeline/component_files.h"

#include <filesystem>

#include "core/diagnostics/error.h"

namespace flashps {
namespace fs = std::filesystem;
namespace {

const std::string& component_given_file(const ModelSource& source, const std::string& component) {
  if (component == "vae") return source.files.vae;
  if (component == "text_encoder") return source.files.text_encoder;
  return source.files.text_encoder_2;
}

const std::optional<std::string>& component_file_prefix(const ModelSource& source, const std::string& component) {
  const FileComponents& held = source.recognised.components;
  if (component == "vae") return held.vae;
  if (component == "text_encoder") return held.text_encoder;
  return held.text_encoder_2;
}

}  // namespace

std::string component_flag(const std::string& component) {
  if (component == "vae") return "--vae";
  if (component == "text_encoder") return "--text-encoder";
  if (component == "text_encoder_2") return "--text-encoder-2";
  throw InvalidArgumentError("no flag gives the component \"" + component + "\"");
}

bool has_component(const ModelSource& source, const std::string& component) {
  return !component_given_file(source, component).empty() || component_file_prefix(source, component).has_value();
}

std::shared_ptr<ImageAutoencoder> load_vae_component(const ModelSource& source, at::ScalarType dtype) {
  const std::string& given = source.files.vae;
  if (!given.empty() && fs::is_directory(given)) return load_image_autoencoder(given, dtype);
  if (!given.empty() || source.recognised.components.vae)
    throw UnsupportedError((given.empty() ? source.path : given) +
                           ": loading a VAE from a single file needs the LDM autoencoder key layout, which this "
                           "build does not have yet; pass --vae with a diffusers vae/ folder");
  throw NotFoundError(source.path + ": no VAE in this file: pass --vae FILE (e.g. ae.safetensors for Flux)");
}

Conditioning carried_empty_prompt(const ModelSource& source) {
  Conditioning conditioning;
  if (!source.is_file()) return conditioning;
  const auto& entries = source.file->tensors->entries();
  const std::string prefix = "flashps.empty_prompt.";
  if (!entries.count(prefix + "prompt_embeds")) return conditioning;
  auto take = [&](const std::string& name, int64_t dims) {
    if (!entries.count(prefix + name)) throw CorruptDataError(source.path + ": no tensor '" + prefix + name + "'");
    at::Tensor tensor = source.file->tensors->read(prefix + name).to(at::kFloat).clone();
    if (tensor.dim() == dims + 1 && tensor.size(0) == 1) tensor = tensor.squeeze(0);
    if (tensor.dim() != dims)
      throw CorruptDataError(source.path + ": '" + prefix + name + "' must have " + std::to_string(dims) +
                             " dimensions");
    return tensor;
  };
  conditioning.prompt_embeds = take("prompt_embeds", 2);
  conditioning.pooled_prompt_embeds = take("pooled_prompt_embeds", 1);
  conditioning.source = source.path + " (flashps.empty_prompt)";
  return conditioning;
}

std::string tokenizer_folder(const ModelSource& source, const std::string& tokenizer) {
  std::vector<fs::path> candidates;
  if (!source.files.tokenizers_dir.empty()) candidates.push_back(fs::path(source.files.tokenizers_dir) / tokenizer);
  candidates.push_back(fs::path(source.path).parent_path() / tokenizer);
  for (const fs::path& folder : candidates)
    if (fs::is_directory(folder)) return folder.string();
  throw NotFoundError(source.path + ": no " + tokenizer + "/ folder beside the file" +
                      (source.files.tokenizers_dir.empty() ? "" : " or in " + source.files.tokenizers_dir) +
                      "; single files carry no tokenizer: pass --tokenizers DIR, a diffusers folder of this model "
                      "with tokenizer/" + (tokenizer == "tokenizer_2" ? " and tokenizer_2/" : "") + " (for " +
                      source.recognised.type->release + ")");
}

}  // namespace flashps
