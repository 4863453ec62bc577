// A FluxRequest's optional inputs change how the batch is assembled, never the result: Fill
// conditioning given beside the latents equals the concatenated input, precomputed RoPE tables
// equal the ones forward() computes, also when only some token rows are carried.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>

#include "core/diagnostics/error.h"
#include "models/flux/flux_transformer.h"
#include "models/random/random_weights.h"
#include "support/tiny_flux.h"

using namespace flashps;

namespace {

constexpr int64_t kLatentChannels = 4, kChannels = 16, kGrid = 4, kText = 3;

FluxRequest whole_request(uint64_t seed) {
  auto generator = at::detail::createCPUGenerator(seed);
  FluxRequest request;
  request.hidden_states = at::randn({kGrid * kGrid, kChannels}, generator);
  request.encoder_hidden_states = at::randn({kText, 32}, generator);
  request.pooled_projections = at::randn({32}, generator);
  at::Tensor rows = at::arange(kGrid).repeat_interleave(kGrid), cols = at::arange(kGrid).repeat({kGrid});
  request.img_ids = at::stack({at::zeros_like(rows), rows, cols}, 1).to(at::kFloat);
  request.txt_ids = at::zeros({kText, 3});
  request.timestep = 0.6;
  return request;
}

FluxRequest split_request(const FluxRequest& whole) {
  FluxRequest split = whole;
  split.hidden_states = whole.hidden_states.narrow(1, 0, kLatentChannels).contiguous();
  split.conditioning = whole.hidden_states.narrow(1, kLatentChannels, kChannels - kLatentChannels).contiguous();
  return split;
}

}  // namespace

TEST_CASE("Fill conditioning beside the latents and cached RoPE tables give the same output", "[flux][models]") {
  at::NoGradGuard no_grad;
  FluxTransformer model(test::tiny_flux_config(kChannels, 16, 1, 1));
  fill_random_weights(*model, 5);
  std::vector<FluxRequest> whole{whole_request(1), whole_request(2)};
  whole[1].carried_rows = at::tensor({0, 3, 5, 6, 15}, at::kLong);  // a kv replay's masked tokens
  const std::vector<at::Tensor> reference = model->forward(whole);
  REQUIRE(reference[1].size(0) == 5);

  std::vector<FluxRequest> split{split_request(whole[0]), split_request(whole[1])};
  for (FluxRequest& request : split) {
    request.image_rope = std::make_shared<const RotaryTables>(model->rotary_tables(request.img_ids));
    request.text_rope = std::make_shared<const RotaryTables>(model->rotary_tables(request.txt_ids));
  }
  const std::vector<at::Tensor> outputs = model->forward(split);
  REQUIRE(outputs.size() == reference.size());
  for (size_t i = 0; i < outputs.size(); ++i) CHECK(at::equal(outputs[i], reference[i]));
  // The model timed its input packing (part of a serving step's batch assembly).
  CHECK(model->last_input_packing().seconds > 0);
}

TEST_CASE("image tokens whose channels do not add up to the model's are refused", "[flux][models]") {
  at::NoGradGuard no_grad;
  FluxTransformer model(test::tiny_flux_config(kChannels, 16, 1, 1));
  fill_random_weights(*model, 5);
  FluxRequest request = split_request(whole_request(1));
  request.conditioning = request.conditioning.narrow(1, 0, 2);
  CHECK_THROWS_WITH(model->forward({request}), Catch::Contains("channels"));
  request = split_request(whole_request(1));
  request.conditioning = request.conditioning.narrow(0, 0, 3);
  CHECK_THROWS_WITH(model->forward({request}), Catch::Contains("token count"));
}

TEST_CASE("a precomputed conditioning embedding equals projecting the conditioning each step", "[flux][models]") {
  at::NoGradGuard no_grad;
  FluxTransformer model(test::tiny_flux_config(kChannels, 16, 1, 1));
  fill_random_weights(*model, 5);
  std::vector<FluxRequest> split{split_request(whole_request(1)), split_request(whole_request(2))};
  split[1].carried_rows = at::tensor({0, 3, 5, 6, 15}, at::kLong);
  const std::vector<at::Tensor> reference = model->forward(split);

  std::vector<FluxRequest> embedded = split;
  for (FluxRequest& request : embedded) {
    request.conditioning_embedding = model->conditioning_embedding(request.conditioning, request.carried_rows);
    request.conditioning = at::Tensor();
  }
  CHECK(embedded[1].conditioning_embedding.size(0) == 5);  // carried rows only
  const std::vector<at::Tensor> outputs = model->forward(embedded);
  REQUIRE(outputs.size() == reference.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    REQUIRE(outputs[i].sizes() == reference[i].sizes());
    // The input projection is summed in two parts: equal up to float rounding.
    CHECK((outputs[i] - reference[i]).abs().max().item<double>() < 1e-5);
  }

  // Misuse is refused: a mixed batch, both inputs at once, an embedding of the wrong rows.
  std::vector<FluxRequest> mixed{embedded[0], split[1]};
  CHECK_THROWS_WITH(model->forward(mixed), Catch::Contains("mixes"));
  FluxRequest both = embedded[0];
  both.conditioning = split[0].conditioning;
  CHECK_THROWS_WITH(model->forward({both}), Catch::Contains("both"));
  FluxRequest wrong_rows = embedded[1];
  wrong_rows.carried_rows = at::tensor({1, 2}, at::kLong);
  CHECK_THROWS_WITH(model->forward({wrong_rows}), Catch::Contains("one row per carried image token"));
  CHECK_THROWS_WITH(model->conditioning_embedding(at::zeros({16, kChannels}), {}), Catch::Contains("channels"));
}
