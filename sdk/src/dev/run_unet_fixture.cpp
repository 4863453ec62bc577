// Runs a UNet2DConditionModel golden fixture (unet_sd_inpaint_tiny, unet_sd2_inpaint_tiny,
// unet_sdxl_tiny): the noise prediction `sample`, with SDXL's added conditions when a case has them.
#include <ATen/ATen.h>

#include "dev/fixture_runners.h"
#include "models/unet/unet_model.h"

namespace flashps::dev {

FixtureReport run_unet_fixture(const FixtureSet& set) {
  const UNet2DConditionModel model = load_unet(set.dir);
  return run_each_case(set, "forward", [&](const FixtureCase& fixture_case) {
    UNetInputs inputs;
    inputs.sample = set.input_tensor(fixture_case, "sample");
    inputs.timestep = set.input_tensor(fixture_case, "timestep");
    inputs.encoder_hidden_states = set.input_tensor(fixture_case, "encoder_hidden_states");
    if (fixture_case.inputs.contains("added_cond_kwargs.text_embeds")) {
      inputs.text_embeds = set.input_tensor(fixture_case, "added_cond_kwargs.text_embeds");
      inputs.time_ids = set.input_tensor(fixture_case, "added_cond_kwargs.time_ids");
    }
    return std::map<std::string, at::Tensor>{{"sample", model->forward(inputs)}};
  });
}

}  // namespace flashps::dev
