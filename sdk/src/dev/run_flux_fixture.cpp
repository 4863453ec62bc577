#include <ATen/ATen.h>

#include "core/diagnostics/error.h"
#include "dev/fixture_runners.h"
#include "models/flux/flux_transformer.h"

namespace flashps::dev {

std::map<std::string, at::Tensor> flux_case_outputs(const FluxTransformer& model, const FixtureSet& set,
                                                    const FixtureCase& fixture_case) {
  if (fixture_case.call != "forward")
    throw Error("unknown call '" + fixture_case.call + "' for FluxTransformer2DModel (it takes forward)");
  at::NoGradGuard no_grad;
  return {{"sample", model->forward_batched(
                         set.input_tensor(fixture_case, "hidden_states"),
                         set.input_tensor(fixture_case, "encoder_hidden_states"),
                         set.input_tensor(fixture_case, "pooled_projections"),
                         set.input_tensor(fixture_case, "timestep"), set.input_tensor(fixture_case, "img_ids"),
                         set.input_tensor(fixture_case, "txt_ids"), set.input_tensor(fixture_case, "guidance"))}};
}

FixtureReport run_flux_transformer_fixture(const FixtureSet& set) {
  FluxTransformer model = load_flux_transformer(set.dir, at::kFloat);
  return run_each_case(set, "forward", [&](const FixtureCase& fixture_case) {
    return flux_case_outputs(model, set, fixture_case);
  });
}

}  // namespace flashps::dev
