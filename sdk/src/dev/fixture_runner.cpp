#include <ATen/ATen.h>

#include <filesystem>

#include "core/error.h"
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

FixtureReport run_fixture(const std::string& dir) {
  namespace fs = std::filesystem;
  if (fs::exists(fs::path(dir) / "schedulers.json")) return run_schedulers_fixture(dir);
  FixtureSet set = load_fixture_set(dir);
  if (set.component == "FluxTransformer2DModel") return run_flux_transformer_fixture(set);
  if (set.component == "AutoencoderKL") return run_autoencoder_kl_fixture(set);
  throw Error(dir + ": component '" + set.component + "' is not supported by this build");
}

}  // namespace flashps::dev
