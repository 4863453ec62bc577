// Runs the text encoder golden fixtures: CLIPTextModel (clip_text_tiny, clip_text_tiny_gelu:
// last_hidden_state, pooler_output, the penultimate hidden states; text_embeds with a projection)
// and T5EncoderModel (t5_encoder_tiny: last_hidden_state, with the attention mask a case gives).
#include <ATen/ATen.h>

#include "core/diagnostics/error.h"
#include "dev/fixture_runners.h"
#include "models/clip/clip_text_model.h"
#include "models/t5/t5_encoder_model.h"

namespace flashps::dev {

std::map<std::string, at::Tensor> clip_text_case_outputs(const ClipTextModel& model, const FixtureSet& set,
                                                         const FixtureCase& fixture_case) {
  if (fixture_case.call != "forward")
    throw Error("unknown call '" + fixture_case.call + "' for CLIPTextModel (it takes forward)");
  const ClipTextOutput output = model->forward(set.input_tensor(fixture_case, "input_ids"));
  std::map<std::string, at::Tensor> actual = {{"last_hidden_state", output.last_hidden_state},
                                              {"pooler_output", output.pooler_output},
                                              {"hidden_states_penultimate", output.penultimate}};
  if (output.text_embeds.defined()) actual["text_embeds"] = output.text_embeds;
  return actual;
}

std::map<std::string, at::Tensor> t5_encoder_case_outputs(const T5EncoderModel& model, const FixtureSet& set,
                                                          const FixtureCase& fixture_case) {
  if (fixture_case.call != "forward")
    throw Error("unknown call '" + fixture_case.call + "' for T5EncoderModel (it takes forward)");
  // FluxPipeline passes no mask; a case that gives one is run with it.
  const at::Tensor mask = fixture_case.inputs.contains("attention_mask")
                              ? set.input_tensor(fixture_case, "attention_mask")
                              : at::Tensor();
  return {{"last_hidden_state", model->forward(set.input_tensor(fixture_case, "input_ids"), mask)}};
}

FixtureReport run_clip_text_fixture(const FixtureSet& set) {
  const ClipTextModel model = load_clip_text_model(set.dir);
  return run_each_case(set, "forward", [&](const FixtureCase& fixture_case) {
    return clip_text_case_outputs(model, set, fixture_case);
  });
}

FixtureReport run_t5_encoder_fixture(const FixtureSet& set) {
  const T5EncoderModel model = load_t5_encoder_model(set.dir);
  return run_each_case(set, "forward", [&](const FixtureCase& fixture_case) {
    return t5_encoder_case_outputs(model, set, fixture_case);
  });
}

}  // namespace flashps::dev
