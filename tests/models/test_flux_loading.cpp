#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "core/diagnostics/error.h"
#include "core/files/tensor_io.h"
#include "models/flux/flux_transformer.h"
#include "models/random/random_weights.h"
#include "support/temp_dir.h"
#include "support/tiny_flux.h"

using namespace flashps;

namespace {

FluxConfig small_config() { return test::tiny_flux_config(8, 8, 1, 1); }

// Writes a model folder whose weights went through `edit` (rename, drop or reshape keys).
std::string write_model(const test::TempDir& dir,
                        const std::function<void(std::vector<std::pair<std::string, at::Tensor>>&)>& edit) {
  FluxTransformer model(small_config());
  fill_random_weights(*model, 3);
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  for (const auto& item : model->named_parameters(true)) tensors.emplace_back(item.key(), item.value());
  edit(tensors);
  std::filesystem::create_directories(dir.path() / "flux");
  save_safetensors(dir.file("flux/diffusion_pytorch_model.safetensors"), tensors);
  std::ofstream(dir.file("flux/config.json")) << small_config().to_json().dump();
  return dir.file("flux");
}

}  // namespace

TEST_CASE("Flux parameter paths are diffusers checkpoint keys", "[flux][loading]") {
  FluxTransformer model(small_config());
  std::set<std::string> keys;
  for (const auto& item : model->named_parameters(true)) keys.insert(item.key());
  for (const char* key : {"x_embedder.weight", "context_embedder.bias",
                          "time_text_embed.timestep_embedder.linear_1.weight",
                          "time_text_embed.text_embedder.linear_2.bias",
                          "transformer_blocks.0.norm1.linear.weight", "transformer_blocks.0.norm1_context.linear.bias",
                          "transformer_blocks.0.attn.to_q.weight", "transformer_blocks.0.attn.norm_added_k.weight",
                          "transformer_blocks.0.attn.to_out.0.weight", "transformer_blocks.0.attn.to_add_out.bias",
                          "transformer_blocks.0.ff.net.0.proj.weight", "transformer_blocks.0.ff_context.net.2.bias",
                          "single_transformer_blocks.0.norm.linear.weight", "single_transformer_blocks.0.proj_mlp.weight",
                          "single_transformer_blocks.0.proj_out.bias", "single_transformer_blocks.0.attn.norm_q.weight",
                          "norm_out.linear.weight", "proj_out.weight"}) {
    INFO(key);
    CHECK(keys.count(key) == 1);
  }
}

TEST_CASE("strict loading names missing, unexpected and mis-shaped keys", "[flux][loading]") {
  test::TempDir dir;
  const std::string path = write_model(dir, [](auto& tensors) {
    for (auto& [name, tensor] : tensors) {
      if (name == "proj_out.weight") name = "proj_out.weights";
      if (name == "x_embedder.bias") tensor = at::zeros({3});
    }
  });
  try {
    load_flux_transformer(path, at::kFloat);
    FAIL("loading should have failed");
  } catch (const Error& error) {
    const std::string message = error.what();
    CHECK_THAT(message, Catch::Contains("diffusion_pytorch_model.safetensors"));
    CHECK_THAT(message, Catch::Contains("missing keys (1)"));
    CHECK_THAT(message, Catch::Contains("proj_out.weight"));
    CHECK_THAT(message, Catch::Contains("unexpected keys (1)"));
    CHECK_THAT(message, Catch::Contains("proj_out.weights"));
    CHECK_THAT(message, Catch::Contains("x_embedder.bias: file has [3], model expects [16]"));
  }
}

TEST_CASE("a correct checkpoint loads with bf16 conversion", "[flux][loading]") {
  test::TempDir dir;
  FluxTransformer model = load_flux_transformer(write_model(dir, [](auto&) {}), at::kBFloat16);
  CHECK(model->dtype() == at::kBFloat16);
}
