// `flashps model info PATH [--json]`: what a model folder or single file is, before loading it:
// family and variant, parameters, stored types per tensor group, components present or to pass,
// fingerprint (flashps_model_describe).
#include <flashps/flashps.hpp>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "model_options.h"

namespace flashps::cli {
namespace {

struct ModelInfoOptions {
  std::string path;
  ModelPathOptions files;  // --vae, ... as edit takes them
  bool json = false;
};

nlohmann::json describe(const ModelInfoOptions& options) {
  flashps_model_params params = flashps_model_default_params();
  auto c_str = [](const std::string& text) { return text.empty() ? nullptr : text.c_str(); };
  params.vae_path = c_str(options.files.vae);
  params.text_encoder_path = c_str(options.files.text_encoder);
  params.text_encoder_2_path = c_str(options.files.text_encoder_2);
  params.model_type = c_str(options.files.model_type);
  params.tokenizers_dir = c_str(options.files.tokenizers);
  char* text = nullptr;
  sdk::check(flashps_model_describe(options.path.c_str(), &params, &text));
  const std::unique_ptr<char, void (*)(void*)> owned(text, flashps_buffer_free);
  return nlohmann::json::parse(owned.get());
}

std::string stored_types(const nlohmann::json& stored_as) {
  std::string types;
  for (const auto& [type, count] : stored_as.items())
    types += (types.empty() ? "" : ", ") + type + " x" + std::to_string(count.get<int64_t>());
  return types;
}

void print_text(const nlohmann::json& info) {
  std::cout << info["path"].get<std::string>() << "\n"
            << "  family:      " << info["family"].get<std::string>() << "\n"
            << "  variant:     " << info["variant"].get<std::string>() << " (" << info["description"].get<std::string>()
            << "; from " << info["variant_from"].get<std::string>() << ")\n"
            << "  format:      " << info["format"].get<std::string>() << "\n"
            << "  configs:     " << info["configs"].get<std::string>() << "\n"
            << "  parameters:  " << info["parameters"].get<int64_t>() << "\n";
  for (const nlohmann::json& group : info["tensor_groups"])
    std::cout << "  " << group["group"].get<std::string>() << ": " << group["tensors"].get<int64_t>() << " tensors, "
              << group["parameters"].get<int64_t>() << " parameters, " << stored_types(group["stored_as"]) << "\n";
  for (const auto& [name, component] : info["components"].items()) {
    if (component.value("present", false))
      std::cout << "  " << name << ": present (" << component.value("from", std::string()) << ")\n";
    else
      std::cout << "  " << name << ": MISSING: " << component.value("message", std::string()) << "\n";
  }
  if (info["fingerprint"].is_string()) std::cout << "  fingerprint: " << info["fingerprint"].get<std::string>() << "\n";
}

int show_model_info(const ModelInfoOptions& options) {
  const nlohmann::json info = describe(options);
  if (options.json)
    std::cout << info.dump(2) << "\n";
  else
    print_text(info);
  return 0;
}

}  // namespace

void add_model_commands(CLI::App& app, CommandAction& action) {
  static ModelInfoOptions options;
  CLI::App* model = app.add_subcommand("model", "Model files: what a folder or single file is");
  model->require_subcommand(1);
  CLI::App* info = model->add_subcommand(
      "info", "Family, variant, parameters, stored types per tensor group, components present or to pass "
              "(--vae, ...), fingerprint; without loading the weights");
  info->add_option("path", options.path, "A diffusers folder, a .safetensors checkpoint or a .gguf file")->required();
  info->add_option("--vae", options.files.vae, "VAE file given beside it (as flashps edit takes it)");
  info->add_option("--text-encoder", options.files.text_encoder, "CLIP-L file given beside it");
  info->add_option("--text-encoder-2", options.files.text_encoder_2, "T5-XXL (Flux) or CLIP-G (SDXL) file beside it");
  info->add_option("--model-type", options.files.model_type, "Override the recognised type (see flashps edit --help)");
  info->add_option("--tokenizers", options.files.tokenizers, "A diffusers folder holding tokenizer/ (tokenizer_2/)");
  info->add_flag("--json", options.json,
                 "JSON: family, variant, parameters, tensor_groups, components, fingerprint, ...");
  info->callback([&action] { action = [] { return show_model_info(options); }; });
}

}  // namespace flashps::cli
