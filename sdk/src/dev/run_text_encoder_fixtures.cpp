// Runs the text encoder golden fixtures: CLIPTextModel (clip_text_tiny, clip_text_tiny_gelu:
// last_hidden_state, pooler_output, the penultimate hidden states) and T5EncoderModel
// (t5_encoder_tiny: last_hidden_state, with the attention mask a case gives).
#include <ATen/ATen.h>

#include "dev/fixture_runners.h"
#include "models/clip/clip_text_model.h"
#include "models/t5/t5_encoder_model.h"

namespace flashps::dev {

FixtureReport run_clip_text_fixture(const FixtureSet& set) {
  const ClipTextModel model = load_clip_text_model(set.dir);
  return run_each_case(set, "forward", [&](const FixtureCase& fixture_case) {
    const ClipTextOutput output = model->forward(set.input_tensor(fixture_case, "input_ids"));
    std::map<std::string, at::Tensor> actual = {{"last_hidden_state", output.last_hidden_state},
                                                {"pooler_output", output.pooler_output},
                                                {"hidden_states_penultimate", output.penultimate}};
    if (output.text_embeds.defined()) actual["text_embeds"] = output.text_embeds;
    return actual;
  });
}

FixtureReport run_t5_encoder_fixture(const FixtureSet& set) {
  const T5EncoderModel model = load_t5_encoder_model(set.dir);
  return run_each_case(set, "forward", [&](const FixtureCase& fixture_case) {
    // FluxPipeline passes no mask; a case that gives one is run with it.
    const at::Tensor mask = fixture_case.inputs.contains("attention_mask")
                                ? set.input_tensor(fixture_case, "attention_mask")
                                : at::Tensor();
    return std::map<std::string, at::Tensor>{
        {"last_hidden_state", model->forward(set.input_tensor(fixture_case, "input_ids"), mask)}};
  });
}

}  // namespace flashps::dev
