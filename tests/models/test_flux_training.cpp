// Training runs the same module classes as inference: with parameters that require gradients
// every layer takes its differentiable ATen path, which must compute the same function as the
// fast inference kernels, and every parameter that the forward pass uses must receive a gradient.
#include <ATen/ATen.h>
#include <torch/autograd.h>

#include <catch2/catch.hpp>

#include "models/flux/flux_transformer.h"
#include "models/random/random_weights.h"
#include "support/tiny_flux.h"

using namespace flashps;

namespace {

FluxTransformer tiny_trainable_flux() {
  FluxTransformer model(test::tiny_flux_config(16, 16, 1, 2));
  fill_random_weights(*model, 11);
  return model;
}

FluxRequest tiny_request(uint64_t seed, double sigma) {
  auto generator = at::detail::createCPUGenerator(seed);
  const int64_t grid = 4, text = 3;
  FluxRequest request;
  request.hidden_states = at::randn({grid * grid, 16}, generator);
  request.encoder_hidden_states = at::randn({text, 32}, generator);
  request.pooled_projections = at::randn({32}, generator);
  at::Tensor rows = at::arange(grid).repeat_interleave(grid), cols = at::arange(grid).repeat({grid});
  request.img_ids = at::stack({at::zeros_like(rows), rows, cols}, 1).to(at::kFloat);
  request.txt_ids = at::zeros({text, 3});
  request.timestep = sigma;
  return request;
}

void set_requires_grad(torch::nn::Module& module, bool value) {
  for (auto& parameter : module.parameters()) parameter.set_requires_grad(value);
}

}  // namespace

TEST_CASE("the differentiable path computes what the inference kernels compute", "[models][training]") {
  FluxTransformer model = tiny_trainable_flux();
  const std::vector<FluxRequest> batch{tiny_request(1, 0.7), tiny_request(2, 0.2)};

  std::vector<at::Tensor> inference;
  {
    at::NoGradGuard no_grad;
    inference = model->forward(batch);
  }
  set_requires_grad(*model, true);
  std::vector<at::Tensor> training = model->forward(batch);
  REQUIRE(training.size() == inference.size());
  for (size_t i = 0; i < training.size(); ++i) {
    CHECK(training[i].requires_grad());
    CHECK((training[i].detach() - inference[i]).abs().max().item<float>() < 1e-4f);
  }
}

TEST_CASE("a backward pass reaches every parameter of the Flux model", "[models][training]") {
  FluxTransformer model = tiny_trainable_flux();
  set_requires_grad(*model, true);
  at::Tensor loss = at::zeros({});
  for (const at::Tensor& output : model->forward({tiny_request(3, 0.5), tiny_request(4, 0.9)}))
    loss = loss + output.pow(2).mean();
  loss.backward();
  for (const auto& item : model->named_parameters()) {
    if (item.key().find("guidance_embedder") != std::string::npos) continue;  // no guidance input
    INFO(item.key());
    REQUIRE(item.value().grad().defined());
    CHECK(at::isfinite(item.value().grad()).all().item<bool>());
    CHECK(item.value().grad().abs().sum().item<float>() > 0.0f);
  }
}
