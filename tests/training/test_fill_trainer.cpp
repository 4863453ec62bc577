// The trainer is reproducible: a run interrupted and resumed from its checkpoint ends with the
// same weights as an uninterrupted one, and the exported folder loads as an inpainting pipeline.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "core/files/tensor_io.h"
#include "pipeline/flux/flux_inpaint_pipeline.h"
#include "support/temp_dir.h"
#include "training/fill_trainer.h"
#include "support/source_dir.h"

using namespace flashps;
using namespace flashps::training;

namespace {

FillTrainerOptions tiny_options(const std::string& output_dir, int64_t steps) {
  FillTrainerOptions options;
  options.output_dir = output_dir;
  options.photo_folders = {flashps::test::source_dir() + "/samples/images"};
  options.photo_options.holdout_every = 0;
  options.photo_options.max_short_side = 64;
  FillModelSpec& spec = options.spec;
  spec.autoencoder.patch_size = 2;
  spec.autoencoder.latent_channels = 6;  // a projection, fitted by the trainer
  spec.transformer.out_channels = 6 * 4;
  spec.transformer.in_channels = 2 * 24 + 2 * 2 * 4;
  spec.transformer.num_layers = 1;
  spec.transformer.num_single_layers = 1;
  spec.transformer.attention_head_dim = 16;
  spec.transformer.num_attention_heads = 2;
  spec.transformer.joint_attention_dim = 16;
  spec.transformer.pooled_projection_dim = 16;
  spec.transformer.axes_dims_rope = {4, 4, 8};
  spec.text_tokens = 2;
  options.steps = steps;
  options.crop_sizes = {16, 24};
  options.tokens_per_batch = 32;
  options.warmup_steps = 2;
  options.checkpoint_every = 100;
  options.seed = 3;
  return options;
}

std::map<std::string, at::Tensor> checkpoint_weights(const std::string& dir) {
  return load_safetensors(dir + "/checkpoint/weights.safetensors");
}

}  // namespace

TEST_CASE("a resumed training run equals an uninterrupted one", "[training]") {
  test::TempDir straight, resumed;
  auto summary = train_fill_model(tiny_options(straight.path().string(), 4));
  REQUIRE(summary.last_step == 4);

  auto first = train_fill_model(tiny_options(resumed.path().string(), 2));
  REQUIRE(first.last_step == 2);
  auto second = train_fill_model(tiny_options(resumed.path().string(), 4));
  REQUIRE(second.first_step == 2);
  REQUIRE(second.last_step == 4);

  auto a = checkpoint_weights(straight.path().string()), b = checkpoint_weights(resumed.path().string());
  REQUIRE(a.size() == b.size());
  for (const auto& [name, tensor] : a) {
    INFO(name);
    CHECK(at::allclose(tensor, b.at(name), 1e-6, 1e-7));
  }
}

TEST_CASE("training stops on request with a checkpoint and exports a loadable model", "[training]") {
  test::TempDir scratch;
  FillTrainerOptions options = tiny_options(scratch.path().string(), 10);
  auto summary = train_fill_model(options, [](const TrainingProgress& progress) { return progress.step < 2; });
  CHECK(summary.stopped_early);
  CHECK(summary.last_step == 2);
  CHECK(std::filesystem::exists(scratch.path() / "checkpoint" / "state.json"));
  auto pipeline = FluxInpaintPipeline::load(summary.model_dir, at::kFloat);
  REQUIRE(pipeline->is_fill());

  FillTrainerOptions other_seed = options;
  other_seed.seed = 4;
  CHECK_THROWS_WITH(train_fill_model(other_seed), Catch::Contains("seed"));
}

TEST_CASE("fine-tuning starts from a model folder's weights and autoencoder", "[training]") {
  test::TempDir first, tuned;
  auto source = train_fill_model(tiny_options(first.path().string(), 2));

  FillTrainerOptions options = tiny_options(tuned.path().string(), 2);
  options.seed = 5;  // a fine-tuning run has its own seed and data order
  options.init_from = source.model_dir;
  options.loss_target = "sample";
  options.edge_loss_weight = 1.0;
  options.detail_loss_weight = 0.5;
  // Stopped after one step, the exported weights are still close to the source's.
  auto one_step = train_fill_model(options, [](const TrainingProgress&) { return false; });
  REQUIRE(one_step.last_step == 1);
  const auto source_weights = load_safetensors(source.model_dir + "/transformer/diffusion_pytorch_model.safetensors");
  const auto step_one = load_safetensors(one_step.model_dir + "/transformer/diffusion_pytorch_model.safetensors");
  // The autoencoder is the source's, not one fitted again with the new seed.
  CHECK(at::equal(load_safetensors(source.model_dir + "/vae/diffusion_pytorch_model.safetensors").at("projection"),
                  load_safetensors(one_step.model_dir + "/vae/diffusion_pytorch_model.safetensors").at("projection")));
  // One warm-up step of AdamW moves each weight by about the learning rate (2e-4).
  double largest_change = 0, largest_weight = 0;
  for (const auto& [name, tensor] : source_weights) {
    largest_change = std::max(largest_change, (tensor.to(at::kFloat) - step_one.at(name).to(at::kFloat)).abs().max().item<double>());
    largest_weight = std::max(largest_weight, tensor.to(at::kFloat).abs().max().item<double>());
  }
  CHECK(largest_change < 0.1 * largest_weight);
  CHECK(largest_change > 0);

  auto resumed = train_fill_model(options);
  CHECK(resumed.first_step == 1);
  CHECK(resumed.last_step == 2);
  CHECK(std::isfinite(resumed.final_average_loss));

  FillTrainerOptions velocity = options;
  velocity.output_dir = (tuned.path() / "other").string();
  velocity.loss_target = "velocity";
  CHECK_THROWS_WITH(train_fill_model(velocity), Catch::Contains("edge loss"));
  velocity.edge_loss_weight = 0;
  CHECK_THROWS_WITH(train_fill_model(velocity), Catch::Contains("detail loss"));
  CHECK(read_json_file(resumed.model_dir + "/model_index.json").at("_flashps_training").at("detail_loss_weight").get<double>() == 0.5);
}

TEST_CASE("channel-balanced loss weighs the autoencoder's components by their variance", "[training]") {
  test::TempDir plain, balanced;
  FillTrainerOptions options = tiny_options(plain.path().string(), 1);
  options.loss_target = "sample";
  auto unweighted = train_fill_model(options);
  options.output_dir = balanced.path().string();
  options.channel_balance = 1.0;
  auto weighted = train_fill_model(options);
  // Same data, noise and initial weights: only the loss's weighting differs.
  CHECK(weighted.final_average_loss != unweighted.final_average_loss);
  const nlohmann::json index = read_json_file(weighted.model_dir + "/model_index.json");
  const nlohmann::json& recorded = index.at("_flashps_training").at("channel_balance");
  CHECK(recorded.at("exponent").get<double>() == 1.0);
  // Principal components differ in variance, so whitening weighs them differently; the weights
  // are normalised to mean 1, so the largest exceeds 1 and the smallest is below.
  CHECK(recorded.at("weight_max").get<double>() > 1.0);
  CHECK(recorded.at("weight_min").get<double>() < 1.0);
  CHECK(recorded.at("weight_max").get<double>() > 4 * recorded.at("weight_min").get<double>());
  CHECK_FALSE(read_json_file(unweighted.model_dir + "/model_index.json").at("_flashps_training").contains("channel_balance"));

  FillTrainerOptions velocity = options;
  velocity.output_dir = (balanced.path() / "other").string();
  velocity.loss_target = "velocity";
  CHECK_THROWS_WITH(train_fill_model(velocity), Catch::Contains("channel-balance"));
}

TEST_CASE("a model trained on pyramid-filled conditioning records it for the pipeline", "[training]") {
  test::TempDir neutral, pyramid;
  // Two steps: the first step's output projection starts at zero, so only the second step's
  // loss depends on the conditioning.
  FillTrainerOptions options = tiny_options(neutral.path().string(), 2);
  auto plain = train_fill_model(options);
  options.output_dir = pyramid.path().string();
  options.spec.masked_image_fill = "pyramid";
  auto filled = train_fill_model(options);
  // Same data, noise and initial weights: only the conditioning under the mask differs.
  CHECK(filled.final_average_loss != plain.final_average_loss);
  CHECK(read_json_file(filled.model_dir + "/model_index.json").at("_flashps_masked_image_fill") == "pyramid");
  CHECK_FALSE(read_json_file(plain.model_dir + "/model_index.json").contains("_flashps_masked_image_fill"));
  CHECK(FluxInpaintPipeline::load(filled.model_dir, at::kFloat)->components().masked_image_fill ==
        MaskedImageFill::pyramid);
  CHECK(FluxInpaintPipeline::load(plain.model_dir, at::kFloat)->components().masked_image_fill ==
        MaskedImageFill::neutral);

  options.output_dir = (pyramid.path() / "other").string();
  options.spec.masked_image_fill = "telea";
  CHECK_THROWS_WITH(train_fill_model(options), Catch::Contains("telea"));
}
