// The mask-aware UNet: transformer blocks that compute only masked tokens, capture and replay
// through the shared engine (CaptureRouter, ReplayRouter, per-level token masks).
#include <ATen/ATen.h>

#include <algorithm>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/diagnostics/error.h"
#include "engine/capture_router.h"
#include "engine/replay_router.h"
#include "models/random/random_weights.h"
#include "models/unet/unet_block_work.h"
#include "models/unet/unet_model.h"

using namespace flashps;

namespace {

// Three levels (12 -> 6 -> 3 latent tokens per side: odd sizes included), cross-attention at
// the two upper levels and in the middle, 9 input channels, two guidance copies.
UNetConfig tiny_config(bool linear_projection) {
  const nlohmann::json config = {
      {"in_channels", 9},
      {"out_channels", 4},
      {"down_block_types", {"CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"}},
      {"up_block_types", {"UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"}},
      {"block_out_channels", {16, 32, 32}},
      {"layers_per_block", 1},
      {"norm_num_groups", 8},
      {"cross_attention_dim", 24},
      {"attention_head_dim", {2, 4, 4}},
      {"use_linear_projection", linear_projection}};
  return parse_unet_config(config, "tiny unet");
}

struct TinyUNetRun {
  UNet2DConditionModel model{nullptr};
  UNetInputs inputs;
};

TinyUNetRun tiny_run(bool linear_projection, uint64_t seed) {
  TinyUNetRun run;
  run.model = UNet2DConditionModel(tiny_config(linear_projection));
  fill_random_weights(*run.model, 11);
  auto generator = at::detail::createCPUGenerator(seed);
  const at::Tensor sample = at::randn({1, 9, 12, 12}, generator);
  run.inputs.sample = sample.expand({2, -1, -1, -1}).contiguous();  // the copies share the sample
  run.inputs.timestep = at::tensor(std::vector<float>{500.0f, 500.0f});
  run.inputs.encoder_hidden_states = at::randn({2, 7, 24}, generator);  // negative; positive
  return run;
}

engine::TokenMask rectangle_mask(int64_t top, int64_t left, int64_t height, int64_t width) {
  at::Tensor grid = at::zeros({12, 12}, at::kBool);
  grid.narrow(0, top, height).narrow(1, left, width).fill_(true);
  return engine::token_mask_from_grid(grid);
}

}  // namespace

TEST_CASE("the UNet runs exactly the blocks its config lists, per level", "[unet][mask_aware]") {
  TinyUNetRun run = tiny_run(false, 1);
  const auto blocks = unet_transformer_blocks(run.model->config());
  const auto routed = unet_routed_blocks(run.model->config());
  // 7 transformer blocks and 11 ResNets (3 down, 2 mid, 6 up), each ResNet two routed blocks.
  REQUIRE(routed.size() == 7 + 2 * 11);
  CHECK(routed[0].kind == UNetBlockShape::Kind::resnet);
  CHECK(routed[0].in_channels == 16);
  CHECK(routed[1].kind == UNetBlockShape::Kind::resnet_moments);
  CHECK(routed[2].kind == UNetBlockShape::Kind::transformer);
  CHECK(routed.back().kind == UNetBlockShape::Kind::transformer);
  CHECK(routed[routed.size() - 3].in_channels == 16 + 16);  // the last up ResNet takes conv_in's skip
  // down 0, down 1, mid, up (level 1) x2, up (level 0) x2
  REQUIRE(blocks.size() == 7);
  CHECK(blocks[0].level == 0);
  CHECK(blocks[2].level == 2);
  CHECK(blocks[3].level == 1);
  CHECK(blocks[6].level == 0);
  CHECK(blocks[6].channels == 16);
  unet::UNetRouting routing;
  routing.requests.push_back({0, 2, nullptr});
  run.inputs.routing = &routing;
  const at::Tensor routed_output = run.model->forward(run.inputs);
  CHECK(routing.next_block == 29);
  run.inputs.routing = nullptr;
  CHECK(routed_output.equal(run.model->forward(run.inputs)));

  const auto masks = unet_block_masks(run.model->config(), rectangle_mask(0, 0, 3, 3), 2);
  // 7 transformer blocks and two routed blocks per ResNet (output, norm2 moments): 29 in all.
  // The transformer blocks' masks keep the values they had when they were the only routed blocks.
  REQUIRE(masks.size() == 29);
  std::vector<engine::TokenMask> transformer_masks;
  for (size_t i = 0; i < routed.size(); ++i)
    if (routed[i].kind == UNetBlockShape::Kind::transformer) transformer_masks.push_back(masks[i]);
  REQUIRE(transformer_masks.size() == 7);
  CHECK(transformer_masks[0].token_count() == 2 * 144);
  CHECK(transformer_masks[2].token_count() == 2 * 9);  // 12 -> 6 -> 3
  CHECK(transformer_masks[2].masked_count() == 2 * 1);
  CHECK(transformer_masks[0].masked_count() == 2 * 9);
  // The first ResNet (12 x 12, 4-pixel tiles): the 3 x 3 corner grown by 2 pixels touches 2 x 2
  // of the 3 x 3 tiles; its moments block counts tiles.
  CHECK(masks[0].token_count() == 2 * 144);
  CHECK(masks[0].masked_count() == 2 * 64);
  CHECK(masks[1].token_count() == 2 * 9);
  CHECK(masks[1].masked_count() == 2 * 4);
  // A 6 x 6 level does not split into tiles: its ResNets compute every pixel.
  const size_t level_one = std::find_if(routed.begin(), routed.end(), [](const UNetBlockShape& block) {
                             return block.kind == UNetBlockShape::Kind::resnet && block.level == 1;
                           }) - routed.begin();
  CHECK(masks[level_one].masked_count() == masks[level_one].token_count());
  CHECK(masks[level_one + 1].token_count() == 2);
}

TEST_CASE("UNet self-replay: capture with a request, replay it, same output (<= 1e-4)", "[unet][mask_aware][slow]") {
  const bool linear = GENERATE(false, true);
  INFO("linear projection " << linear);
  TinyUNetRun run = tiny_run(linear, 2);
  const UNetConfig& config = run.model->config();
  engine::MemoryCaptureStore store;
  const engine::CaptureId id{"template", "tiny", "config"};
  auto writer = store.begin(id);
  engine::CaptureRouter capture_router(*writer, /*capture_kv=*/false, /*capture_hidden=*/true);
  capture_router.set_step(3);
  unet::UNetRouting routing;
  routing.requests.push_back({0, 2, &capture_router});
  run.inputs.routing = &routing;
  const at::Tensor reference = run.model->forward(run.inputs);
  auto capture = writer->commit();
  REQUIRE(capture->contains({3, 6, engine::Slot::hidden}));

  // A mask whose grown region covers every 4-pixel tile of the 12 x 12 level (its ResNets run
  // dense), a corner one tile covers and one covering 4 of 9 tiles (tiled ResNets).
  const std::vector<engine::TokenMask> edit_masks{rectangle_mask(2, 3, 5, 4), rectangle_mask(0, 0, 2, 2),
                                                  rectangle_mask(9, 8, 3, 4)};
  for (const engine::TokenMask& edit_mask : edit_masks) {
  const auto masks = unet_block_masks(config, edit_mask, 2);
  INFO("level-0 ResNet computes " << masks[0].masked_count() << " of " << masks[0].token_count() << " rows");
  // Every block from the cache, and a plan that computes some blocks in full (a ResNet's output
  // or its moments alone among them).
  const std::vector<bool> all_cached(masks.size(), true);
  std::vector<bool> mixed(masks.size());
  for (size_t i = 0; i < mixed.size(); ++i) mixed[i] = i % 3 != 1;
  for (const auto& use_cache : {all_cached, mixed}) {
    engine::ReplayRouter replay(capture, masks, use_cache, {3}, at::Device(at::kCPU));
    replay.set_step(3);
    routing = {};
    routing.requests.push_back({0, 2, &replay});
    const at::Tensor replayed = run.model->forward(run.inputs);
    const double error = (replayed - reference).abs().max().item<double>();
    INFO("max |replay - full| " << error << " (output scale " << reference.abs().max().item<double>() << ")");
    CHECK(error <= 1e-4);
    const int cached = static_cast<int>(std::count(use_cache.begin(), use_cache.end(), true));
    CHECK(replay.stats().blocks_from_cache == cached);
    CHECK(replay.stats().blocks_computed == static_cast<int>(use_cache.size()) - cached);
    CHECK(replay.stats().bytes_loaded > 0);
  }
  }
}

TEST_CASE("UNet replay computes the masked tokens and takes the others from the capture", "[unet][mask_aware]") {
  // Capture a template, then edit a different sample: unmasked rows of every cached block come
  // from the template, so the output differs from a full run of the edit, and from the template.
  TinyUNetRun template_run = tiny_run(true, 3);
  engine::MemoryCaptureStore store;
  auto writer = store.begin({"t", "m", "c"});
  engine::CaptureRouter capture_router(*writer, false, true);
  unet::UNetRouting routing;
  routing.requests.push_back({0, 2, &capture_router});
  template_run.inputs.routing = &routing;
  const at::Tensor template_output = template_run.model->forward(template_run.inputs);
  auto capture = writer->commit();

  UNetInputs edit = template_run.inputs;
  auto generator = at::detail::createCPUGenerator(99);
  edit.sample = edit.sample.clone();
  edit.sample.narrow(2, 2, 5).narrow(3, 3, 4).copy_(at::randn({2, 9, 5, 4}, generator));
  edit.routing = nullptr;
  const at::Tensor full_edit = template_run.model->forward(edit);

  const auto masks = unet_block_masks(template_run.model->config(), rectangle_mask(2, 3, 5, 4), 2);
  engine::ReplayRouter replay(capture, masks, std::vector<bool>(masks.size(), true), {0}, at::Device(at::kCPU));
  routing = {};
  routing.requests.push_back({0, 2, &replay});
  edit.routing = &routing;
  const at::Tensor replayed = template_run.model->forward(edit);
  CHECK((replayed - full_edit).abs().max().item<double>() > 1e-3);
  CHECK((replayed - template_output).abs().max().item<double>() > 1e-3);
  // Blocks the plan computes in full make it a full computation again.
  engine::ReplayRouter computing(capture, masks, std::vector<bool>(masks.size(), false), {0}, at::Device(at::kCPU));
  routing = {};
  routing.requests.push_back({0, 2, &computing});
  CHECK((template_run.model->forward(edit) - full_edit).abs().max().item<double>() <= 1e-5);
}

TEST_CASE("a UNet batch mixes replayed, captured and plain requests", "[unet][mask_aware]") {
  TinyUNetRun run = tiny_run(false, 4);
  engine::MemoryCaptureStore store;
  auto writer = store.begin({"t", "m", "c"});
  engine::CaptureRouter capture_router(*writer, false, true);
  unet::UNetRouting routing;
  routing.requests.push_back({0, 2, &capture_router});
  run.inputs.routing = &routing;
  const at::Tensor single = run.model->forward(run.inputs);
  auto capture = writer->commit();

  // Batch: [replay of the template (2 rows), a plain request (2 rows), a capture (2 rows)].
  const auto masks = unet_block_masks(run.model->config(), rectangle_mask(0, 0, 4, 12), 2);
  engine::ReplayRouter replay(capture, masks, std::vector<bool>(masks.size(), true), {0}, at::Device(at::kCPU));
  auto second_writer = store.begin({"t2", "m", "c"});
  engine::CaptureRouter second_capture(*second_writer, false, true);
  UNetInputs batch = run.inputs;
  batch.sample = at::cat({run.inputs.sample, run.inputs.sample, run.inputs.sample});
  batch.timestep = at::cat({run.inputs.timestep, run.inputs.timestep, run.inputs.timestep});
  batch.encoder_hidden_states =
      at::cat({run.inputs.encoder_hidden_states, run.inputs.encoder_hidden_states, run.inputs.encoder_hidden_states});
  routing = {};
  routing.requests = {{0, 2, &replay}, {2, 2, nullptr}, {4, 2, &second_capture}};
  batch.routing = &routing;
  const at::Tensor output = run.model->forward(batch);
  for (int request = 0; request < 3; ++request) {
    INFO("request " << request);
    CHECK((output.narrow(0, 2 * request, 2) - single).abs().max().item<double>() <= 1e-4);
  }
  auto second = second_writer->commit();
  CHECK(second->contains({0, 6, engine::Slot::hidden}));
}

TEST_CASE("UNet block costs: the masked path saves the per-query work at every level", "[unet][mask_aware]") {
  const UNetConfig config = tiny_config(true);
  const auto work = unet_block_work(config, 77, 4);
  // Two full rows: grown by the ResNets' 2-pixel reach they touch the top row of 4-pixel tiles.
  const auto masks = unet_block_masks(config, rectangle_mask(0, 0, 2, 12), 1);
  std::vector<engine::TokenCounts> counts;
  for (const auto& mask : masks) counts.push_back({0, mask.token_count(), mask.masked_count()});
  const double saving = engine::forward_flops(work, counts) / engine::forward_flops(work, counts, engine::CacheMode::hidden);
  CHECK(saving > 1.5);
  const auto times = engine::estimate_block_times(work, counts, engine::CacheMode::hidden, engine::DeviceSpeed{});
  REQUIRE(times.size() == masks.size());
  const auto routed = unet_routed_blocks(config);
  std::vector<engine::TokenCounts> transformer_counts;
  for (size_t i = 0; i < times.size(); ++i) {
    INFO("block " << i << " level " << routed[i].level);
    CHECK(times[i].compute_with_cache <= times[i].compute_without_cache);
    // Transformer blocks save at every level, ResNets where their grid splits into tiles (12 x 12).
    if (routed[i].kind == UNetBlockShape::Kind::transformer ||
        (routed[i].kind == UNetBlockShape::Kind::resnet && routed[i].level == 0))
      CHECK(times[i].compute_with_cache < times[i].compute_without_cache);
    if (routed[i].kind == UNetBlockShape::Kind::transformer) transformer_counts.push_back(counts[i]);
  }
  // The deepest level (3x3) is masked in 1 of 3 rows: its load covers the 6 unmasked tokens.
  CHECK(transformer_counts[2].image - transformer_counts[2].masked == 6);
}

TEST_CASE("a UNet with bfloat16 weights runs mixed precision close to float32", "[unet][mask_aware]") {
  TinyUNetRun run = tiny_run(true, 5);
  const at::Tensor reference = run.model->forward(run.inputs);
  run.model->to(at::kBFloat16);
  REQUIRE(run.model->dtype() == at::kBFloat16);
  const at::Tensor output = run.model->forward(run.inputs);
  CHECK(output.scalar_type() == at::kFloat);  // activations stay float32
  const double relative = ((output - reference).norm() / reference.norm()).item<double>();
  INFO("relative error " << relative);
  CHECK(relative < 0.05);
  CHECK(relative > 0);  // the products really ran in bfloat16
}

TEST_CASE("UNet latent-grid work: per-level routed blocks plus a dense rest", "[unet][mask_aware]") {
  const UNetConfig config = tiny_config(true);
  const auto per_level = unet_block_work(config, 77, 4, 16);
  const auto latent = unet_latent_grid_work(config, 77, 4, 16);
  REQUIRE(latent.size() == per_level.size() + 1);
  // A full step costs the same counted either way (latent grid 12x12 -> levels 144, 36, 9 rows;
  // the rescaling is exact for even sides, so use a 16x16 grid: 256, 64, 16).
  std::vector<engine::TokenCounts> level_counts;  // a moments block's rows: 4-pixel tiles at 16, 8 and 4 pixels
  for (const auto& block : unet_routed_blocks(config)) {
    const int64_t pixels = int64_t(256) >> (2 * block.level);
    level_counts.push_back({0, block.kind == UNetBlockShape::Kind::resnet_moments ? pixels / 16 : pixels, 0});
  }
  const double transformer_flops = engine::forward_flops(per_level, level_counts);
  const double dense = unet_dense_flops_per_latent_token(config);
  CHECK(dense > 0);
  const double latent_flops = engine::forward_flops(latent, engine::TokenCounts{0, 256, 0});
  CHECK(latent_flops == Approx(transformer_flops + dense * 256).epsilon(1e-9));
  // The dense rest is never cheaper with a cache, nor loads anything.
  const auto times = engine::estimate_block_times(latent, engine::TokenCounts{0, 256, 32}, engine::CacheMode::hidden,
                                                  engine::DeviceSpeed{});
  CHECK(times.back().compute_with_cache == times.back().compute_without_cache);
  CHECK(times.front().compute_with_cache < times.front().compute_without_cache);
}
