#include <ATen/ATen.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "dev/fixture_runners.h"

namespace flashps::dev {

CaseResult compare_case_outputs(const FixtureSet& set, const FixtureCase& fixture_case,
                                const std::map<std::string, at::Tensor>& actual) {
  CaseResult result;
  result.name = fixture_case.name;
  for (const auto& [output, key] : fixture_case.outputs) {
    auto found = actual.find(output);
    at::Tensor value = found == actual.end() ? at::Tensor() : found->second;
    result.outputs.push_back(
        compare_output(output, value, set.tensor(key), fixture_case.atol, fixture_case.rtol));
  }
  return result;
}

CaseResult failed_case(const std::string& name, const std::exception& error) {
  CaseResult failed;
  failed.name = name;
  failed.error = error.what();
  return failed;
}

FixtureReport run_each_case(const FixtureSet& set, const std::string& call,
                            const std::function<std::map<std::string, at::Tensor>(const FixtureCase&)>& outputs) {
  FixtureReport report;
  report.dir = set.dir;
  report.component = set.component;
  for (const FixtureCase& fixture_case : set.cases) {
    try {
      if (fixture_case.call != call)
        throw Error("unknown call '" + fixture_case.call + "' for " + set.component + " (it takes " + call + ")");
      report.cases.push_back(compare_case_outputs(set, fixture_case, outputs(fixture_case)));
    } catch (const std::exception& error) {
      report.cases.push_back(failed_case(fixture_case.name, error));
    }
  }
  return report;
}

namespace {

// Fixture kinds for what FlashPS does not load yet, and the capability each waits for.
const std::map<std::string, std::string>& kinds_not_built() {
  static const std::map<std::string, std::string> kinds = {
      {"gguf", "GGUF checkpoints of models other than Flux are not loaded yet"},
      {"lora", "LoRA adapters are not applied yet"},
      {"controlnet", "ControlNet is not supported yet"},
  };
  return kinds;
}

// True when every component a checkpoint fixture names is a Flux transformer (the only models
// FlashPS loads from GGUF files so far).
bool only_flux_components(const nlohmann::json& index) {
  const auto components = index.find("components");
  if (components == index.end() || !components->is_object() || components->empty()) return false;
  for (const auto& [name, component] : components->items()) {
    if (!component.is_object() || component.value("_class_name", "") != "FluxTransformer2DModel") return false;
  }
  return true;
}

}  // namespace

FixtureReport run_fixture(const std::string& dir) {
  namespace fs = std::filesystem;
  if (fs::exists(fs::path(dir) / "schedulers.json")) return run_schedulers_fixture(dir);
  const fs::path cases = fs::path(dir) / "cases.json";
  if (fs::exists(cases)) {
    const nlohmann::json index = read_json_file(cases.string());
    const std::string kind = index.is_object() ? index.value("kind", std::string()) : std::string();
    if (kind == "single_file" || (kind == "gguf" && only_flux_components(index)))
      return run_checkpoint_fixture(load_fixture_set(dir));
    if (const auto found = kinds_not_built().find(kind); found != kinds_not_built().end()) {
      FixtureReport report;
      report.dir = dir;
      report.component = kind;
      report.skipped = "'" + kind + "' fixture: " + found->second;
      return report;
    }
    // The T5 tokenizer's cases.json lists prompts with their ids inline, without cases.safetensors.
    if (index.is_object() && index.value("component", std::string()) == "T5Tokenizer") return run_t5_tokenizer_fixture(dir);
  }
  FixtureSet set = load_fixture_set(dir);
  if (set.component == "FluxTransformer2DModel") return run_flux_transformer_fixture(set);
  if (set.component == "AutoencoderKL") return run_autoencoder_kl_fixture(set);
  if (set.component == "UNet2DConditionModel") return run_unet_fixture(set);
  if (set.component == "CLIPTextModel" || set.component == "CLIPTextModelWithProjection")
    return run_clip_text_fixture(set);
  if (set.component == "T5EncoderModel") return run_t5_encoder_fixture(set);
  if (set.component == "CLIPTokenizer") return run_clip_tokenizer_fixture(set);
  throw Error(dir + ": component '" + set.component + "' is not supported by this build");
}

}  // namespace flashps::dev
