// Runs a UNet2DConditionModel golden fixture (unet_sd_inpaint_tiny, unet_sd2_inpaint_tiny,
// unet_sdxl_tiny): the noise prediction `sample`, with SDXL's added conditions when a case has them.
#include <ATen/ATen.h>

#include "core/diagnostics/error.h"
#include "dev/fixture_runners.h"
#include "models/unet/unet_model.h"

namespace flashps::dev {

std::map<std::string, at::Tensor> unet_case_outputs(const UNet2DConditionModel& model, const FixtureSet& set,
                                                    const FixtureCase& fixture_case) {
  if (fixture_case.call != "forward")
    throw Error("unknown call '" + fixture_case.call + "' for UNet2DConditionModel (it takes forward)");
  UNetInputs inputs;
  inputs.sample = set.input_tensor(fixture_case, "sample");
  inputs.timestep = set.input_tensor(fixture_case, "timestep");
  inputs.encoder_hidden_states = set.input_tensor(fixture_case, "encoder_hidden_states");
  if (fixture_case.inputs.contains("added_cond_kwargs.text_embeds")) {
    inputs.text_embeds = set.input_tensor(fixture_case, "added_cond_kwargs.text_embeds");
    inputs.time_ids = set.input_tensor(fixture_case, "added_cond_kwargs.time_ids");
  }
  return {{"sample", model->forward(inputs)}};
}

FixtureReport run_unet_fixture(const FixtureSet& set) {
  const UNet2DConditionModel model = load_unet(set.dir);
  return run_each_case(set, "forward", [&](const FixtureCase& fixture_case) {
    return unet_case_outputs(model, set, fixture_case);
  });
}

}  // namespace flashps::dev
