// The Stable Diffusion inpainting pipeline on a tiny folder assembled from the golden fixtures
// (support/tiny_sd_folder.h).
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "models/unet/unet_block_work.h"
#include "pipeline/stable_diffusion/sd_inpaint_pipeline.h"
#include "serve/engine.h"
#include "serve/engine_device.h"
#include "support/fixtures.h"
#include "support/tiny_pipeline.h"
#include "support/tiny_sd_folder.h"

using namespace flashps;
namespace fs = std::filesystem;

using test::tiny_sd_folder;

TEST_CASE("SD inpainting folders edit only the masked region, with prompts and guidance",
          "[pipeline][sd][fixtures][slow]") {
  const auto fixtures = test::fixtures_root();
  if (!fixtures) {
    WARN("SKIPPED: ../shared/fixtures not found (set FLASHPS_FIXTURES_DIR)");
    return;
  }
  test::TempDir dir;
  for (int channels : {9, 4}) {
    INFO(channels << "-channel UNet");
    auto pipeline = SDInpaintPipeline::load(tiny_sd_folder(*fixtures, dir, channels), at::kFloat);
    CHECK(pipeline->is_inpainting_unet() == (channels == 9));
    EditRequest request = test::request_for(test::gradient_image(40, 36), test::box_mask(40, 36, 8, 8, 16), 3, 4);
    request.prompt = "a red apple";
    const EditResult first = pipeline->edit(request);
    CHECK(first.image.width == 40);
    CHECK(first.stats.steps_run == 5);  // PLMS: n + 1 model evaluations
    // Unmasked pixels come back unchanged; masked ones are generated.
    const Image original = test::gradient_image(40, 36);
    bool outside_same = true, inside_changed = false;
    for (int y = 0; y < 36; ++y)
      for (int x = 0; x < 40; ++x) {
        const bool masked = x >= 8 && x < 24 && y >= 8 && y < 24;
        for (int c = 0; c < 3; ++c) {
          const bool same = first.image.at(x, y, c) == original.at(x, y, c);
          if (!masked) outside_same &= same;
          else inside_changed |= !same;
        }
      }
    CHECK(outside_same);
    CHECK(inside_changed);
    CHECK(test::max_pixel_difference(pipeline->edit(request).image, first.image) == 0);  // deterministic
    EditRequest other = request;
    other.prompt = "a blue car";
    CHECK(test::max_pixel_difference(pipeline->edit(other).image, first.image) > 0);
    other.guidance_scale = 1.0;  // no classifier-free guidance: one UNet row per step
    CHECK(pipeline->edit(other).image.width == 40);
    EditRequest partial = request;
    partial.strength = 0.5;
    CHECK(pipeline->edit(partial).stats.steps_run == 3);

    // Two jobs batched into one UNet call give the images they give alone.
    EditRequest second = request;
    second.seed = 9;
    const Image alone = pipeline->edit(second).image;
    auto a = pipeline->start_edit(request), b = pipeline->start_edit(second);
    while (!a->denoised()) pipeline->step({a.get(), b.get()});
    CHECK(test::max_pixel_difference(pipeline->finish_edit(*a).image, first.image) <= 1);
    CHECK(test::max_pixel_difference(pipeline->finish_edit(*b).image, alone) <= 1);
  }
}

TEST_CASE("SD folders missing a component are named in errors", "[pipeline][sd][fixtures]") {
  const auto fixtures = test::fixtures_root();
  if (!fixtures) {
    WARN("SKIPPED: ../shared/fixtures not found (set FLASHPS_FIXTURES_DIR)");
    return;
  }
  test::TempDir dir;
  const std::string folder = tiny_sd_folder(*fixtures, dir, 9);
  fs::remove_all(fs::path(folder) / "tokenizer");
  CHECK_THROWS_WITH(SDInpaintPipeline::load(folder, at::kFloat), Catch::Contains("no 'tokenizer' component"));
  CHECK_THROWS_WITH(SDInpaintPipeline::load(dir.file("nothing"), at::kFloat), Catch::Contains("no model_index.json"));
}

TEST_CASE("SD folders read _flashps_default_steps like Flux folders, and SD templates capture hidden only",
          "[pipeline][sd][fixtures][slow]") {
  const auto fixtures = test::fixtures_root();
  if (!fixtures) {
    WARN("SKIPPED: ../shared/fixtures not found (set FLASHPS_FIXTURES_DIR)");
    return;
  }
  test::TempDir dir;
  const std::string folder = tiny_sd_folder(*fixtures, dir, 4);
  const std::string index = (fs::path(folder) / "model_index.json").string();
  CHECK(SDInpaintPipeline::load(folder, at::kFloat)->recommended_steps() == 28);
  nlohmann::json json = read_json_file(index);
  json["_flashps_default_steps"] = 2;
  write_json_file(index, json);
  auto pipeline = SDInpaintPipeline::load(folder, at::kFloat);
  CHECK(pipeline->recommended_steps() == 2);
  EditRequest request = test::request_for(test::gradient_image(40, 36), test::box_mask(40, 36, 8, 8, 16), 3, 0);
  CHECK(pipeline->edit(request).stats.steps_run == 3);  // PLMS: n + 1 model evaluations of 2 steps
  // The family's restriction, applied by the shared registration: block outputs only.
  CHECK_THROWS_AS(pipeline->register_template(request, /*capture_kv=*/true, /*capture_hidden=*/false),
                  UnsupportedError);
  CHECK(pipeline->register_template(request).bytes > 0);  // kv asked by default: captures hidden
  json["_flashps_default_steps"] = 0;
  write_json_file(index, json);
  CHECK_THROWS_WITH(SDInpaintPipeline::load(folder, at::kFloat),
                    Catch::Contains("model_index.json: _flashps_default_steps must be an integer from 1 to 1000"));
}

TEST_CASE("SD templates: registered once, edits replay the unmasked rows of every transformer block",
          "[pipeline][sd][fixtures][mask_aware]") {
  const auto fixtures = test::fixtures_root();
  if (!fixtures) {
    WARN("SKIPPED: ../shared/fixtures not found (set FLASHPS_FIXTURES_DIR)");
    return;
  }
  test::TempDir dir;
  for (int channels : {9, 4}) {
    INFO(channels << "-channel UNet");
    auto pipeline = SDInpaintPipeline::load(tiny_sd_folder(*fixtures, dir, channels), at::kFloat);
    EditRequest request = test::request_for(test::gradient_image(40, 36), test::box_mask(40, 36, 8, 8, 16), 3, 4);
    request.prompt = "a red apple";
    request.mode = CacheMode::full;
    const EditResult full = pipeline->edit(request);

    request.mode = CacheMode::hidden;
    const EditResult unregistered = pipeline->edit(request);
    CHECK_FALSE(unregistered.stats.cache_hit);
    CHECK(test::max_pixel_difference(unregistered.image, full.image) == 0);

    const TemplateInfo info = pipeline->register_template(request);
    CHECK(info.bytes > 0);
    // Self-replay: the same request from the capture gives the full computation's image.
    request.use_planner = false;
    const EditResult replayed = pipeline->edit(request);
    CHECK(replayed.stats.cache_hit);
    CHECK(replayed.stats.mode_used == CacheMode::hidden);
    const int blocks = static_cast<int>(unet_routed_blocks(pipeline->components().unet->config()).size());
    CHECK(replayed.stats.blocks_from_cache == blocks * replayed.stats.steps_run);
    CHECK(replayed.stats.compute_saving > 1.0);
    CHECK(test::max_pixel_difference(replayed.image, full.image) <= 1);

    // Another mask on the same template: cached rows from the template, masked rows computed,
    // and so are the rows the template run regenerated (its mask): a smaller mask inside the
    // template's saves as much as the template's own, one elsewhere saves less.
    EditRequest smaller = request;
    smaller.mask = test::box_mask(40, 36, 16, 16, 8);
    const EditResult edited = pipeline->edit(smaller);
    CHECK(edited.stats.cache_hit);
    CHECK(edited.stats.compute_saving == Approx(replayed.stats.compute_saving));
    EditRequest elsewhere = request;
    elsewhere.mask = test::box_mask(40, 36, 24, 24, 8);
    const EditResult apart = pipeline->edit(elsewhere);
    CHECK(apart.stats.cache_hit);
    CHECK(apart.stats.compute_saving > 1.0);
    CHECK(apart.stats.compute_saving < replayed.stats.compute_saving);
    CHECK_THAT(test::joined_notes(apart.stats), Catch::Contains("captured with a mask"));
    smaller.use_planner = true;  // the planner may compute some blocks in full instead
    const EditResult planned = pipeline->edit(smaller);
    CHECK(planned.stats.blocks_from_cache + planned.stats.blocks_computed == blocks * planned.stats.steps_run);

    // Settings that change the activations do not hit the capture.
    EditRequest other_steps = request;
    other_steps.steps = 6;
    CHECK_FALSE(pipeline->edit(other_steps).stats.cache_hit);
    EditRequest kv = request;
    kv.mode = CacheMode::kv;
    CHECK_THROWS_WITH(pipeline->edit(kv), Catch::Contains("'kv' does not apply to UNet"));
  }
}

TEST_CASE("SD folders serve through the engine: batched, cached and plain requests", "[pipeline][sd][fixtures][engine]") {
  const auto fixtures = test::fixtures_root();
  if (!fixtures) {
    WARN("SKIPPED: ../shared/fixtures not found (set FLASHPS_FIXTURES_DIR)");
    return;
  }
  test::TempDir dir;
  std::shared_ptr<SDInpaintPipeline> pipeline = SDInpaintPipeline::load(tiny_sd_folder(*fixtures, dir, 9), at::kFloat);
  EditRequest request = test::request_for(test::gradient_image(40, 36), test::box_mask(40, 36, 8, 8, 16), 3, 4);
  request.prompt = "a red apple";
  pipeline->register_template(request);
  EditRequest plain = request;
  plain.seed = 5;
  plain.mode = CacheMode::full;
  const Image cached_alone = pipeline->edit(request).image;
  const Image plain_alone = pipeline->edit(plain).image;

  const serve::EngineDevice device = serve::engine_device(pipeline);
  CHECK(device.profile.cache_mode == engine::CacheMode::hidden);
  serve::Engine engine({device}, serve::EngineOptions{});
  engine.pause();  // both queued first, so they share steps
  serve::EditHandle cached = engine.submit(request), full = engine.submit(plain);
  engine.resume();
  const EditResult cached_result = cached.wait(), full_result = full.wait();
  CHECK(cached_result.stats.cache_hit);
  CHECK_FALSE(full_result.stats.cache_hit);
  CHECK(test::max_pixel_difference(cached_result.image, cached_alone) <= 1);
  CHECK(test::max_pixel_difference(full_result.image, plain_alone) <= 1);
  CHECK(engine.counters().steps < 2 * cached_result.stats.steps_run);  // batched together
}
