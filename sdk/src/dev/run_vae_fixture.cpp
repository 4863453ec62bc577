// Runs an AutoencoderKL golden fixture (vae_sd_tiny, vae_flux_tiny): "encode" cases compare the
// raw moments and the posterior mean, "decode" cases the decoded sample.
#include <ATen/ATen.h>

#include <filesystem>

#include "core/diagnostics/error.h"
#include "dev/fixture_runners.h"
#include "models/vae/autoencoder_kl.h"

namespace flashps::dev {

std::map<std::string, at::Tensor> autoencoder_kl_case_outputs(const AutoencoderKL& model, const FixtureSet& set,
                                                              const FixtureCase& fixture_case) {
  std::map<std::string, at::Tensor> actual;
  if (fixture_case.call == "encode") {
    at::Tensor moments = model.encode_moments(set.input_tensor(fixture_case, "sample"));
    actual["moments"] = moments;
    actual["latent_dist_mean"] = moments.narrow(1, 0, model.config().latent_channels);
  } else if (fixture_case.call == "decode") {
    actual["sample"] = model.decode(set.input_tensor(fixture_case, "z"));
  } else {
    throw Error("unknown call '" + fixture_case.call + "' for AutoencoderKL");
  }
  return actual;
}

FixtureReport run_autoencoder_kl_fixture(const FixtureSet& set) {
  FixtureReport report;
  report.dir = set.dir;
  report.component = set.component;
  const std::string config_source = (std::filesystem::path(set.dir) / "config.json").string();
  const std::string weights_path = (std::filesystem::path(set.dir) / set.weights).string();
  std::shared_ptr<AutoencoderKL> model = load_autoencoder_kl(
      parse_autoencoder_kl_config(set.config, config_source), weights_path, at::kFloat);

  for (const FixtureCase& fixture_case : set.cases) {
    try {
      report.cases.push_back(compare_case_outputs(set, fixture_case, autoencoder_kl_case_outputs(*model, set, fixture_case)));
    } catch (const std::exception& error) {
      report.cases.push_back(failed_case(fixture_case.name, error));
    }
  }
  return report;
}

}  // namespace flashps::dev
