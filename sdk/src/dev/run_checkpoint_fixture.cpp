// Runs a checkpoint fixture (kind single_file or gguf): models stored as users keep them, one file
// per case or one for all. Each case names a component (cases.json "components": its class, its
// diffusers config, and the key prefix it has in the file); the component is loaded the way a
// pipeline loads it from a file: the file's tensors under the prefix, seen in the model's keys
// through the component's layout table, checked against the config and loaded strictly.
#include <ATen/ATen.h>

#include <filesystem>
#include <memory>
#include <set>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "dev/fixture_runners.h"
#include "models/loading/checkpoint_file.h"
#include "models/loading/checkpoint_prefix.h"

namespace flashps::dev {
namespace {

// One component loaded from one file; only the member of its class is set.
struct CheckpointComponent {
  std::string class_name;
  FluxTransformer flux{nullptr};
  UNet2DConditionModel unet{nullptr};
  std::shared_ptr<AutoencoderKL> vae;
  ClipTextModel clip{nullptr};
  T5EncoderModel t5{nullptr};
};

CheckpointComponent load_checkpoint_component(const FixtureSet& set, const nlohmann::json& component,
                                              std::shared_ptr<const CheckpointTensors> file) {
  namespace fs = std::filesystem;
  const std::string config_path = (fs::path(set.dir) / component.at("config").get<std::string>()).string();
  const nlohmann::json config = read_json_file(config_path);
  auto tensors = tensors_under_prefix(std::move(file), component.value("prefix", std::string()));
  CheckpointComponent loaded;
  loaded.class_name = component.at("_class_name").get<std::string>();
  if (loaded.class_name == "FluxTransformer2DModel") {
    const FluxConfig parsed = FluxConfig::from_json(config, config_path);
    loaded.flux = load_flux_transformer(*flux_transformer_tensors(std::move(tensors)), parsed, config_path, at::kFloat);
  } else if (loaded.class_name == "UNet2DConditionModel") {
    const UNetConfig parsed = parse_unet_config(config, config_path);
    loaded.unet = load_unet(*unet_tensors(std::move(tensors), parsed), parsed, config_path, at::kFloat);
  } else if (loaded.class_name == "AutoencoderKL") {
    const AutoencoderKLConfig parsed = parse_autoencoder_kl_config(config, config_path);
    loaded.vae = load_autoencoder_kl(*autoencoder_tensors(std::move(tensors), parsed), parsed, config_path, at::kFloat);
  } else if (loaded.class_name == "CLIPTextModel" || loaded.class_name == "CLIPTextModelWithProjection") {
    const ClipTextConfig parsed = parse_clip_text_config(config, config_path);
    loaded.clip = load_clip_text_model(*clip_text_tensors(std::move(tensors), parsed), parsed, config_path, at::kFloat);
  } else if (loaded.class_name == "T5EncoderModel") {
    const T5Config parsed = T5Config::from_json(config, config_path);
    loaded.t5 = load_t5_encoder_model(*t5_encoder_tensors(std::move(tensors)), parsed, config_path, at::kFloat);
  } else {
    throw Error(set.dir + ": component class '" + loaded.class_name + "' is not supported in checkpoint fixtures");
  }
  return loaded;
}

std::map<std::string, at::Tensor> checkpoint_case_outputs(const CheckpointComponent& loaded, const FixtureSet& set,
                                                          const FixtureCase& fixture_case) {
  if (loaded.flux) return flux_case_outputs(loaded.flux, set, fixture_case);
  if (loaded.unet) return unet_case_outputs(loaded.unet, set, fixture_case);
  if (loaded.vae) return autoencoder_kl_case_outputs(*loaded.vae, set, fixture_case);
  if (loaded.clip) return clip_text_case_outputs(loaded.clip, set, fixture_case);
  return t5_encoder_case_outputs(loaded.t5, set, fixture_case);
}

}  // namespace

FixtureReport run_checkpoint_fixture(const FixtureSet& set) {
  namespace fs = std::filesystem;
  FixtureReport report;
  report.dir = set.dir;
  std::map<std::string, std::shared_ptr<const CheckpointTensors>> files;  // opened once, shared by components
  std::map<std::pair<std::string, std::string>, CheckpointComponent> loaded;  // (component, file) -> model
  std::set<std::string> classes;
  for (const FixtureCase& fixture_case : set.cases) {
    try {
      const std::string file = fixture_case.weights.empty() ? set.checkpoint : fixture_case.weights;
      if (file.empty()) throw Error(set.dir + ": case '" + fixture_case.name + "' names no checkpoint file");
      const auto component = set.components.find(fixture_case.component);
      if (component == set.components.end())
        throw Error(set.dir + ": case '" + fixture_case.name + "' names no component of \"components\"");
      auto model = loaded.find({fixture_case.component, file});
      if (model == loaded.end()) {
        auto opened = files.find(file);
        if (opened == files.end())
          opened = files.emplace(file, open_checkpoint_file((fs::path(set.dir) / file).string())).first;
        model = loaded.emplace(std::make_pair(fixture_case.component, file),
                               load_checkpoint_component(set, *component, opened->second))
                    .first;
      }
      classes.insert(model->second.class_name);
      report.cases.push_back(
          compare_case_outputs(set, fixture_case, checkpoint_case_outputs(model->second, set, fixture_case)));
    } catch (const std::exception& error) {
      report.cases.push_back(failed_case(fixture_case.name, error));
    }
  }
  for (const std::string& name : classes) report.component += (report.component.empty() ? "" : ", ") + name;
  return report;
}

}  // namespace flashps::dev
