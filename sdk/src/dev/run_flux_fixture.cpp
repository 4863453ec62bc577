#include <ATen/ATen.h>

#include "dev/fixture_runners.h"
#include "models/flux/flux_transformer.h"

namespace flashps::dev {

FixtureReport run_flux_transformer_fixture(const FixtureSet& set) {
  FixtureReport report{set.dir, set.component, {}};
  FluxTransformer model = load_flux_transformer(set.dir, at::kFloat);
  at::NoGradGuard no_grad;
  for (const FixtureCase& fixture_case : set.cases) {
    try {
      at::Tensor sample = model->forward_batched(
          set.input_tensor(fixture_case, "hidden_states"),
          set.input_tensor(fixture_case, "encoder_hidden_states"),
          set.input_tensor(fixture_case, "pooled_projections"),
          set.input_tensor(fixture_case, "timestep"), set.input_tensor(fixture_case, "img_ids"),
          set.input_tensor(fixture_case, "txt_ids"), set.input_tensor(fixture_case, "guidance"));
      report.cases.push_back(compare_case_outputs(set, fixture_case, {{"sample", sample}}));
    } catch (const std::exception& error) {
      CaseResult failed;
      failed.name = fixture_case.name;
      failed.error = error.what();
      report.cases.push_back(failed);
    }
  }
  return report;
}

}  // namespace flashps::dev
