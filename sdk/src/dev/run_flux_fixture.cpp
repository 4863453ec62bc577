#include <ATen/ATen.h>

#include <filesystem>
#include <memory>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "dev/fixture_runners.h"
#include "models/flux/flux_transformer.h"
#include "models/loading/checkpoint_file.h"

namespace flashps::dev {
namespace {

std::map<std::string, at::Tensor> flux_outputs(FluxTransformer& model, const FixtureSet& set,
                                               const FixtureCase& fixture_case) {
  at::NoGradGuard no_grad;
  return {{"sample", model->forward_batched(
                         set.input_tensor(fixture_case, "hidden_states"),
                         set.input_tensor(fixture_case, "encoder_hidden_states"),
                         set.input_tensor(fixture_case, "pooled_projections"),
                         set.input_tensor(fixture_case, "timestep"), set.input_tensor(fixture_case, "img_ids"),
                         set.input_tensor(fixture_case, "txt_ids"), set.input_tensor(fixture_case, "guidance"))}};
}

}  // namespace

FixtureReport run_flux_transformer_fixture(const FixtureSet& set) {
  FluxTransformer model = load_flux_transformer(set.dir, at::kFloat);
  return run_each_case(set, "forward", [&](const FixtureCase& fixture_case) {
    return flux_outputs(model, set, fixture_case);
  });
}

FixtureReport run_flux_checkpoint_fixture(const FixtureSet& set) {
  namespace fs = std::filesystem;
  std::map<std::string, FluxTransformer> models;  // by weights file: each is loaded once
  FixtureReport report = run_each_case(set, "forward", [&](const FixtureCase& fixture_case) {
    auto loaded = models.find(fixture_case.weights);
    if (loaded == models.end()) {
      const nlohmann::json& component = set.components.at(fixture_case.component);
      const std::string config_path = (fs::path(set.dir) / component.at("config").get<std::string>()).string();
      const FluxConfig config = FluxConfig::from_json(read_json_file(config_path), config_path);
      const std::string weights = (fs::path(set.dir) / fixture_case.weights).string();
      auto tensors = flux_transformer_tensors(open_checkpoint_file(weights));
      loaded = models.emplace(fixture_case.weights, load_flux_transformer(*tensors, config, config_path, at::kFloat)).first;
    }
    return flux_outputs(loaded->second, set, fixture_case);
  });
  report.component = "FluxTransformer2DModel";
  return report;
}

}  // namespace flashps::dev
