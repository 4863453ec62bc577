#include "pipeline/component_files.h"

#include <filesystem>
#include <fstream>
#include <stdlib.h>

#include "core/diagnostics/error.h"
#include "core/files/scratch_folder.h"
#include "models/loading/checkpoint_prefix.h"
#include "models/loading/weights.h"
#include "models/vae/autoencoder_kl.h"
#include "models/vae/autoencoder_kl_config.h"

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

namespace {

// Prefixes a component file may keep from the checkpoint it was cut from.
const char* const kComponentFilePrefixes[] = {"first_stage_model.", "vae.", "cond_stage_model.", "text_encoders.clip_l.",
                                              "text_encoders.t5xxl.", "conditioner.embedders.0.",
                                              "conditioner.embedders.1."};

// The component's tensors as stored: its flag's file (a prefix all its keys share removed), else
// the model file's keys under the prefix recognition found.
std::unique_ptr<CheckpointTensors> component_tensors(const ModelSource& source, const std::string& component) {
  const std::string& given = component_given_file(source, component);
  if (!given.empty()) {
    std::shared_ptr<const CheckpointTensors> file = open_checkpoint_source(given)->tensors;
    for (const char* prefix : kComponentFilePrefixes) {
      bool all = !file->entries().empty();
      for (const auto& [key, unused] : file->entries()) all = all && key.rfind(prefix, 0) == 0;
      if (all) return tensors_under_prefix(file, prefix);
    }
    return tensors_under_prefix(file, "");
  }
  const std::optional<std::string>& prefix = component_file_prefix(source, component);
  if (!prefix) throw NotFoundError(source.path + ": no " + component + " in this file: pass " + component_flag(component) + " FILE");
  return tensors_under_prefix(source.file->tensors, *prefix);
}

nlohmann::json component_config(const ModelSource& source, const std::string& component) {
  nlohmann::json config = source.config(component + "/config.json");
  if (!config.is_object())
    throw NotFoundError(source.config_source(component + "/config.json") + ": missing (needed for " + component + ")");
  return config;
}

std::string weights_source(const ModelSource& source, const std::string& component) {
  const std::string& given = component_given_file(source, component);
  return given.empty() ? source.path : given;
}

// Files keep their quantized (GGUF) and float8 Linear weights as stored: a Q4 or fp8 file then
// needs about its own size in memory (weights.h says what stays decoded).
WeightLoadOptions file_weight_options() {
  WeightLoadOptions options;
  options.keep_quantized = true;
  return options;
}

}  // namespace

std::shared_ptr<ImageAutoencoder> load_vae_component(const ModelSource& source, at::ScalarType dtype) {
  const std::string& given = source.files.vae;
  if (!given.empty() && fs::is_directory(given)) return load_image_autoencoder(given, dtype);
  if (!has_component(source, "vae"))
    throw NotFoundError(source.path + ": no VAE in this file: pass --vae FILE (e.g. ae.safetensors for Flux)");
  const nlohmann::json config = component_config(source, "vae");
  const std::string config_source = source.config_source("vae/config.json") + " for " + weights_source(source, "vae");
  std::unique_ptr<CheckpointTensors> tensors = component_tensors(source, "vae");
  // Latent-diffusion keys (first_stage_model.*, ae.safetensors) are seen in diffusers' keys.
  if (config.value("_class_name", std::string("AutoencoderKL")) == "AutoencoderKL")
    tensors = autoencoder_tensors(std::move(tensors), parse_autoencoder_kl_config(config, config_source));
  return load_image_autoencoder(*tensors, config, config_source, dtype, file_weight_options());
}

ClipTextModel load_clip_component(const ModelSource& source, const std::string& component, at::ScalarType dtype) {
  const std::string& given = component_given_file(source, component);
  if (!given.empty() && fs::is_directory(given)) return load_clip_text_model(given, dtype);
  const std::string config_source =
      source.config_source(component + "/config.json") + " for " + weights_source(source, component);
  const ClipTextConfig config = parse_clip_text_config(component_config(source, component), config_source);
  const auto tensors = clip_text_tensors(component_tensors(source, component), config);
  return load_clip_text_model(*tensors, config, config_source, dtype, file_weight_options());
}

T5EncoderModel load_t5_component(const ModelSource& source, at::ScalarType dtype) {
  const std::string& given = source.files.text_encoder_2;
  if (!given.empty() && fs::is_directory(given)) return load_t5_encoder_model(given, dtype);
  const std::string config_source =
      source.config_source("text_encoder_2/config.json") + " for " + weights_source(source, "text_encoder_2");
  const T5Config config = T5Config::from_json(component_config(source, "text_encoder_2"), config_source);
  const auto tensors = t5_encoder_tensors(component_tensors(source, "text_encoder_2"));
  return load_t5_encoder_model(*tensors, config, config_source, dtype, file_weight_options());
}

UNet2DConditionModel load_unet_component(const ModelSource& source, at::ScalarType dtype) {
  const std::string config_source = source.config_source("unet/config.json") + " for " + source.path;
  const UNetConfig config = parse_unet_config(component_config(source, "unet"), config_source);
  if (!source.recognised.components.denoiser) throw NotFoundError(source.path + ": no UNet in this file");
  const auto tensors =
      unet_tensors(tensors_under_prefix(source.file->tensors, *source.recognised.components.denoiser), config);
  return load_unet(*tensors, config, config_source, dtype, file_weight_options());
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

namespace {

// Standard base64 (the "base64:" values of flashps.files: small binary files such as spiece.model).
std::string decode_carried_base64(const std::string& text, const std::string& what) {
  static const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string bytes;
  uint32_t bits = 0;
  int count = 0;
  for (const char c : text) {
    if (c == '=') break;
    const size_t value = alphabet.find(c);
    if (value == std::string::npos) throw CorruptDataError(what + ": not valid base64");
    bits = (bits << 6) | static_cast<uint32_t>(value);
    count += 6;
    if (count >= 8) {
      count -= 8;
      bytes.push_back(static_cast<char>((bits >> count) & 0xFF));
    }
  }
  return bytes;
}

}  // namespace

TokenizerFolder::TokenizerFolder(const ModelSource& source, const std::string& tokenizer) {
  const bool carried = source.is_file() && source.recognised.written_by_flashps && source.file->carried_files.is_object();
  const std::string prefix = tokenizer + "/";
  bool any = false;
  if (carried)
    for (const auto& [name, content] : source.file->carried_files.items()) any = any || name.rfind(prefix, 0) == 0;
  if (!any) {
    path_ = tokenizer_folder(source, tokenizer);
    return;
  }
  scratch_ = std::make_unique<ScratchFolder>(source.path + "'s " + tokenizer + " files");
  path_ = scratch_->path();
  for (const auto& [name, content] : source.file->carried_files.items()) {
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string file = name.substr(prefix.size());
    if (file.empty() || file.find('/') != std::string::npos || file == "." || file == "..")
      throw CorruptDataError(source.path + ": flashps.files entry \"" + name + "\" is not a file of " + prefix);
    std::string text = content.get<std::string>();
    if (text.rfind("base64:", 0) == 0) text = decode_carried_base64(text.substr(7), source.path + " (flashps.files: " + name + ")");
    scratch_->write_file(file, text);
  }
}

TokenizerFolder::~TokenizerFolder() = default;

}  // namespace flashps
