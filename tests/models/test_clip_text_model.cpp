// CLIPTextModel against transformers (../shared/fixtures/clip_text_tiny{,_gelu}).
#include <ATen/ATen.h>

#include <catch2/catch.hpp>

#include "core/diagnostics/error.h"
#include "dev/fixture_set.h"
#include "models/clip/clip_text_model.h"
#include "support/fixtures.h"
#include <nlohmann/json.hpp>

using namespace flashps;

namespace {

void check_fixture(const std::filesystem::path& dir) {
  const ClipTextModel model = load_clip_text_model(dir.string());
  const dev::FixtureSet fixtures = dev::load_fixture_set(dir.string());
  REQUIRE_FALSE(fixtures.cases.empty());
  for (const dev::FixtureCase& fixture : fixtures.cases) {
    INFO(dir.filename().string() << " " << fixture.name);
    const ClipTextOutput output = model->forward(fixtures.input_tensor(fixture, "input_ids"));
    const std::map<std::string, at::Tensor> actual = {{"last_hidden_state", output.last_hidden_state},
                                                      {"pooler_output", output.pooler_output},
                                                      {"hidden_states_penultimate", output.penultimate}};
    for (const auto& [name, key] : fixture.outputs) {
      const auto comparison = dev::compare_output(name, actual.at(name), fixtures.tensor(key), fixture.atol, fixture.rtol);
      INFO(name << ": max |error| " << comparison.max_abs_error << ", worst error/allowed " << comparison.worst_ratio);
      CHECK(comparison.passed);
    }
  }
}

}  // namespace

TEST_CASE("CLIPTextModel (quick_gelu, argmax pooling) matches transformers", "[models][clip][fixtures]") {
  FLASHPS_REQUIRE_FIXTURE(dir, "clip_text_tiny");
  check_fixture(dir);
}

TEST_CASE("CLIPTextModel (gelu, eos-id pooling) matches transformers", "[models][clip][fixtures]") {
  FLASHPS_REQUIRE_FIXTURE(dir, "clip_text_tiny_gelu");
  check_fixture(dir);
}

TEST_CASE("CLIP text model inputs and configs are checked", "[models][clip]") {
  ClipTextConfig config;
  config.vocab_size = 10;
  config.hidden_size = 8;
  config.intermediate_size = 8;
  config.num_hidden_layers = 2;
  config.num_attention_heads = 2;
  config.max_position_embeddings = 4;
  ClipTextModel model(config);
  for (auto& parameter : model->parameters()) parameter.data().normal_();
  CHECK_THROWS_WITH(model->forward(at::zeros({1, 5}, at::kLong)), Catch::Contains("sequence length 5"));
  CHECK_THROWS_WITH(model->forward(at::full({1, 3}, 10, at::kLong)), Catch::Contains("outside the vocabulary"));
  const ClipTextOutput output = model->forward(at::tensor({0, 7, 2}, at::kLong).reshape({1, 3}));
  CHECK(output.pooler_output.sizes() == at::IntArrayRef{1, 8});
  CHECK(at::allclose(output.pooler_output[0], output.last_hidden_state[0][1]));  // first maximum id
  CHECK_THROWS_WITH(parse_clip_text_config(nlohmann::json{{"vocab_size", 10}}, "c.json"), Catch::Contains("c.json"));
}
