#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cache/activation_store.h"
#include "core/diagnostics/error.h"
#include "models/random/random_model.h"
#include "pipeline/flux/flux_inpaint_pipeline.h"
#include "support/temp_dir.h"
#include "support/tiny_pipeline.h"

using namespace flashps;

using test::box_mask;
using test::gradient_image;
using test::max_pixel_difference;
using test::request_for;
using test::tiny_model;

TEST_CASE("template capture then edit with the same request reproduces the full run", "[pipeline][exactness]") {
  test::TempDir dir;
  auto pipeline = FluxInpaintPipeline::load(tiny_model(dir), at::kFloat);
  Image image = gradient_image(64, 48);
  EditRequest request = request_for(image, box_mask(64, 48, 16, 16, 20), 5);

  EditRequest full_request = request;
  full_request.mode = CacheMode::full;
  EditResult full = pipeline->edit(full_request);
  CHECK(full.stats.mode_used == CacheMode::full);
  CHECK_FALSE(full.stats.cache_hit);

  TemplateInfo info = pipeline->register_template(request);
  CHECK(info.bytes > 0);
  for (CacheMode mode : {CacheMode::kv, CacheMode::hidden}) {
    request.mode = mode;
    EditResult edited = pipeline->edit(request);
    INFO("mode " << cache_mode_name(mode));
    CHECK(edited.stats.cache_hit);
    CHECK(edited.stats.mode_used == mode);
    CHECK(edited.stats.blocks_from_cache > 0);
    CHECK(max_pixel_difference(edited.image, full.image) <= 1);
  }

  // Another mask: the tokens the template run regenerated (its own mask) are computed as well,
  // since their captured activations belong to generated content.
  EditRequest elsewhere = request;
  elsewhere.mask = box_mask(64, 48, 40, 8, 16);
  const EditResult self = pipeline->edit(request);
  const EditResult other = pipeline->edit(elsewhere);
  CHECK(other.stats.cache_hit);
  CHECK(other.stats.compute_saving > 1.0);
  CHECK(other.stats.compute_saving < self.stats.compute_saving);
  CHECK_THAT(test::joined_notes(other.stats), Catch::Contains("captured with a mask"));
}

TEST_CASE("unmasked pixels are pasted back unchanged", "[pipeline]") {
  test::TempDir dir;
  auto pipeline = FluxInpaintPipeline::load(tiny_model(dir), at::kFloat);
  Image image = gradient_image(48, 48);
  Image mask = box_mask(48, 48, 0, 0, 16);
  EditResult result = pipeline->edit(request_for(image, mask, 1));
  int changed_outside = 0, changed_inside = 0;
  for (int y = 0; y < 48; ++y)
    for (int x = 0; x < 48; ++x)
      for (int c = 0; c < 3; ++c) {
        const bool differs = result.image.at(x, y, c) != image.at(x, y, c);
        (mask.at(x, y) ? changed_inside : changed_outside) += differs;
      }
  CHECK(changed_outside == 0);
  CHECK(changed_inside > 0);
}

TEST_CASE("an RGBA input keeps its alpha: exactly where kept, opaque where regenerated", "[pipeline][alpha]") {
  test::TempDir dir;
  auto pipeline = FluxInpaintPipeline::load(tiny_model(dir), at::kFloat);
  const Image rgb = gradient_image(48, 48);
  Image rgba(48, 48, 4);
  for (size_t i = 0; i < rgb.pixel_count(); ++i) {
    for (int c = 0; c < 3; ++c) rgba.pixels[i * 4 + c] = rgb.pixels[i * 3 + c];
    rgba.pixels[i * 4 + 3] = static_cast<uint8_t>(i % 200);  // every pixel partly transparent
  }
  const Image mask = box_mask(48, 48, 0, 0, 16);
  const EditResult result = pipeline->edit(request_for(rgba, mask, 1));
  REQUIRE(result.image.channels == 4);
  int wrong_kept = 0, wrong_regenerated = 0;
  for (int y = 0; y < 48; ++y)
    for (int x = 0; x < 48; ++x) {
      if (mask.at(x, y)) {
        wrong_regenerated += result.image.at(x, y, 3) != 255;
      } else {
        for (int c = 0; c < 4; ++c) wrong_kept += result.image.at(x, y, c) != rgba.at(x, y, c);
      }
    }
  CHECK(wrong_kept == 0);
  CHECK(wrong_regenerated == 0);
  // An empty mask returns the input, alpha included.
  const EditResult unchanged = pipeline->edit(request_for(rgba, Image(48, 48, 1, 0), 1));
  CHECK(unchanged.image.pixels == rgba.pixels);
  // A mask painted in alpha alone (black strokes on a transparent layer) is read, not empty.
  Image alpha_mask(48, 48, 4, 0);
  for (int y = 0; y < 16; ++y)
    for (int x = 0; x < 16; ++x) alpha_mask.at(x, y, 3) = 255;
  const EditResult from_alpha = pipeline->edit(request_for(rgb, alpha_mask, 1));
  CHECK(from_alpha.stats.steps_run > 0);
  CHECK(from_alpha.stats.mask_ratio > 0);
}

TEST_CASE("an empty mask returns the template without running the model", "[pipeline]") {
  test::TempDir dir;
  auto pipeline = FluxInpaintPipeline::load(tiny_model(dir), at::kFloat);
  Image image = gradient_image(32, 32);
  EditResult result = pipeline->edit(request_for(image, Image(32, 32, 1, 0), 1));
  CHECK(result.stats.steps_run == 0);
  CHECK(max_pixel_difference(result.image, image) == 0);
}

TEST_CASE("an all-ones mask is a plain full run even with a registered template", "[pipeline]") {
  test::TempDir dir;
  auto pipeline = FluxInpaintPipeline::load(tiny_model(dir), at::kFloat);
  Image image = gradient_image(32, 32);
  EditRequest request = request_for(image, Image(32, 32, 1, 255), 2);
  pipeline->register_template(request);
  EditResult result = pipeline->edit(request);
  CHECK(result.stats.mode_used == CacheMode::full);
  CHECK(result.stats.steps_run == 3);
  CHECK(result.stats.mask_ratio == Approx(1.0));
}

TEST_CASE("odd sizes and mismatched masks are handled and reported", "[pipeline]") {
  test::TempDir dir;
  auto pipeline = FluxInpaintPipeline::load(tiny_model(dir), at::kFloat);
  Image image = gradient_image(50, 37);
  EditResult result = pipeline->edit(request_for(image, box_mask(25, 20, 5, 5, 8), 3));
  CHECK(result.image.width == 50);
  CHECK(result.image.height == 37);
  CHECK(result.stats.width == 48);
  CHECK(result.stats.height == 32);
  bool mentioned_resize = false;
  for (const auto& note : result.stats.notes) mentioned_resize |= note.find("mask resized") != std::string::npos;
  CHECK(mentioned_resize);
}

TEST_CASE("pipeline loading errors name the folder and the problem", "[pipeline]") {
  test::TempDir dir;
  CHECK_THROWS_WITH(FluxInpaintPipeline::load(dir.file("missing"), at::kFloat),
                    Catch::Contains("does not exist"));
  CHECK_THROWS_WITH(FluxInpaintPipeline::load(dir.path().string(), at::kFloat),
                    Catch::Contains("no transformer/config.json"));
  auto pipeline = FluxInpaintPipeline::load(tiny_model(dir), at::kFloat);
  EditRequest request = request_for(gradient_image(32, 32), box_mask(32, 32, 0, 0, 8), 1);
  request.conditioning.prompt_embeds = at::zeros({3, 7});
  request.conditioning.pooled_prompt_embeds = at::zeros({5});
  request.conditioning.source = "bad.safetensors";
  CHECK_THROWS_WITH(pipeline->edit(request), Catch::Contains("bad.safetensors"));
}

TEST_CASE("an edit can be cancelled from its progress callback", "[pipeline]") {
  test::TempDir dir;
  auto pipeline = FluxInpaintPipeline::load(tiny_model(dir), at::kFloat);
  EditRequest request = request_for(gradient_image(32, 32), box_mask(32, 32, 0, 0, 8), 1);
  int calls = 0;
  request.progress = [&](const ProgressEvent& event) {
    ++calls;
    return event.step < 2;
  };
  CHECK_THROWS_AS(pipeline->edit(request), Cancelled);
  CHECK(calls == 2);
}

TEST_CASE("a non-Fill Flux model inpaints by latent blending", "[pipeline]") {
  test::TempDir dir;
  RandomFluxModelSpec spec = small_fill_model_spec();
  spec.transformer.in_channels = spec.transformer.out_channels;  // plain Flux layout
  spec.transformer.num_layers = 1;
  spec.transformer.num_single_layers = 1;
  spec.vae_config["block_out_channels"] = {8, 8, 8, 8};
  const std::string path = dir.file("plain");
  write_random_flux_model(path, spec);
  auto pipeline = FluxInpaintPipeline::load(path, at::kFloat);
  CHECK_FALSE(pipeline->is_fill());
  Image image = gradient_image(48, 32);
  EditRequest request = request_for(image, box_mask(48, 32, 16, 0, 16), 4);
  EditResult result = pipeline->edit(request);
  CHECK(result.stats.steps_run == 3);
  // Template replay works the same way for blended models.
  pipeline->register_template(request);
  request.mode = CacheMode::kv;
  EditResult replayed = pipeline->edit(request);
  CHECK(replayed.stats.cache_hit);
  CHECK(max_pixel_difference(replayed.image, result.image) <= 1);
}

TEST_CASE("images larger than the context size are edited through a window around the mask", "[pipeline][slow]") {
  test::TempDir dir;
  auto pipeline = FluxInpaintPipeline::load(tiny_model(dir), at::kFloat);
  Image image = gradient_image(160, 96);
  Image mask = box_mask(160, 96, 120, 60, 12);
  EditRequest request = request_for(image, mask, 5);
  request.context_size = 64;
  EditResult result = pipeline->edit(request);
  // The model saw a 64x64 window (no downscaling needed for a 12 px mask), not the whole image.
  CHECK(result.stats.width == 64);
  CHECK(result.stats.height == 64);
  bool noted = false;
  for (const std::string& note : result.stats.notes) noted |= note.find("window") != std::string::npos;
  CHECK(noted);
  int changed_outside = 0, changed_inside = 0;
  for (int y = 0; y < 96; ++y)
    for (int x = 0; x < 160; ++x)
      for (int c = 0; c < 3; ++c) {
        const bool differs = result.image.at(x, y, c) != image.at(x, y, c);
        (mask.at(x, y) ? changed_inside : changed_outside) += differs;
      }
  CHECK(changed_outside == 0);
  CHECK(changed_inside > 0);

  // A mask larger than the context: the window grows and is downscaled to the context size.
  Image big_mask = box_mask(160, 96, 10, 10, 80);
  request = request_for(image, big_mask, 5);
  request.context_size = 64;
  result = pipeline->edit(request);
  CHECK(result.stats.width <= 64);
  CHECK(result.stats.height <= 64);
  // Without a context size the whole image is processed.
  request.context_size = -1;
  CHECK(pipeline->edit(request).stats.width == 160);

  // A template registered without a mask is processed whole (scaled to the context size), and
  // masked edits of it then replay that capture instead of using a window.
  EditRequest template_request = request_for(image, Image(), 5);
  template_request.context_size = 64;
  pipeline->register_template(template_request);
  request = request_for(image, mask, 5);
  request.context_size = 64;
  EditResult replayed = pipeline->edit(request);
  CHECK(replayed.stats.cache_hit);
  CHECK(replayed.stats.width == 64);
  CHECK(replayed.stats.height < 64);
}

TEST_CASE("a template stored on disk is reused by a new process, and damage falls back to compute",
          "[pipeline][cache][slow]") {
  test::TempDir dir;
  const std::string model = tiny_model(dir);
  cache::ActivationStoreOptions options;
  options.directory = dir.file("store");
  Image image = gradient_image(64, 48);
  EditRequest request = request_for(image, box_mask(64, 48, 16, 16, 20), 5);
  EditRequest full_request = request;
  full_request.mode = CacheMode::full;
  Image full;
  {
    auto pipeline = FluxInpaintPipeline::load(model, at::kFloat, cache::ActivationStore::open(options));
    full = pipeline->edit(full_request).image;
    pipeline->register_template(request);
  }
  {  // a fresh pipeline and store, as in a later `flashps edit`
    auto pipeline = FluxInpaintPipeline::load(model, at::kFloat, cache::ActivationStore::open(options));
    request.mode = CacheMode::hidden;
    EditResult edited = pipeline->edit(request);
    CHECK(edited.stats.cache_hit);
    CHECK(edited.stats.entries_failed == 0);
    CHECK(max_pixel_difference(edited.image, full) <= 1);
  }
  // Damage every entry's first bytes: each is detected, quarantined and computed instead.
  for (const auto& file : std::filesystem::directory_iterator(dir.file("store") + "/segments")) {
    std::fstream segment(file.path(), std::ios::in | std::ios::out | std::ios::binary);
    for (int64_t offset = 0; offset < static_cast<int64_t>(std::filesystem::file_size(file.path())); offset += 4096) {
      segment.seekp(offset);
      segment.put('\x7f');
    }
  }
  auto pipeline = FluxInpaintPipeline::load(model, at::kFloat, cache::ActivationStore::open(options));
  EditResult edited = pipeline->edit(request);
  CHECK(edited.stats.cache_hit);
  CHECK(edited.stats.entries_failed > 0);
  bool noted = false;
  for (const std::string& note : edited.stats.notes) noted |= note.find("unreadable") != std::string::npos;
  CHECK(noted);
  CHECK(max_pixel_difference(edited.image, full) <= 1);
}

TEST_CASE("registering on a read-only store is skipped with a note, and its captures still serve edits",
          "[pipeline][cache]") {
  test::TempDir dir;
  const std::string model = tiny_model(dir);
  cache::ActivationStoreOptions options;
  options.directory = dir.file("store");
  Image image = gradient_image(64, 48);
  EditRequest request = request_for(image, box_mask(64, 48, 16, 16, 20), 5);
  FluxInpaintPipeline::load(model, at::kFloat, cache::ActivationStore::open(options))->register_template(request);
  options.read_only = true;
  auto store = cache::ActivationStore::open(options);
  CHECK(store->why_unwritable() ==
        options.directory + " is read-only, so templates are not registered (opened read-only as asked)");
  auto pipeline = FluxInpaintPipeline::load(model, at::kFloat, store);
  const int64_t captures_before = store->stats().captures;
  EditRequest other = request;
  other.seed = request.seed + 1;  // another capture key: would be a new capture on a writable store
  const TemplateInfo skipped = pipeline->register_template(other);
  CHECK(skipped.template_hash.empty());
  CHECK(skipped.stats.template_hash.empty());
  CHECK(skipped.bytes == 0);
  REQUIRE(skipped.stats.notes.size() == 1);
  CHECK(skipped.stats.notes[0] == store->why_unwritable());
  CHECK(store->stats().captures == captures_before);
  request.mode = CacheMode::hidden;
  CHECK(pipeline->edit(request).stats.cache_hit);
}

TEST_CASE("model_index.json options are checked and named in errors", "[pipeline]") {
  test::TempDir dir;
  const std::string model = tiny_model(dir);
  const std::string index_path = model + "/model_index.json";
  nlohmann::json index = nlohmann::json::parse(std::ifstream(index_path));
  index["_flashps_prediction_type"] = "epsilon";
  std::ofstream(index_path) << index.dump();
  CHECK_THROWS_WITH(FluxInpaintPipeline::load(model, at::kFloat),
                    Catch::Contains("model_index.json") && Catch::Contains("epsilon"));
  index["_flashps_prediction_type"] = "sample";
  index["_flashps_native_size"] = 4;
  std::ofstream(index_path) << index.dump();
  CHECK_THROWS_WITH(FluxInpaintPipeline::load(model, at::kFloat), Catch::Contains("_flashps_native_size"));
  index["_flashps_native_size"] = 64;
  index["_flashps_masked_image_fill"] = "telea";
  std::ofstream(index_path) << index.dump();
  CHECK_THROWS_WITH(FluxInpaintPipeline::load(model, at::kFloat),
                    Catch::Contains("model_index.json") && Catch::Contains("telea"));
  index["_flashps_masked_image_fill"] = "pyramid";
  std::ofstream(index_path) << index.dump();
  auto pipeline = FluxInpaintPipeline::load(model, at::kFloat);
  CHECK(pipeline->components().predicts_sample);
  CHECK(pipeline->components().native_size == 64);
  CHECK(pipeline->components().masked_image_fill == MaskedImageFill::pyramid);
  CHECK(pipeline->recommended_steps() == 28);

  index["_flashps_default_steps"] = 0;
  std::ofstream(index_path) << index.dump();
  CHECK_THROWS_WITH(FluxInpaintPipeline::load(model, at::kFloat), Catch::Contains("_flashps_default_steps"));
  index["_flashps_default_steps"] = 2;
  std::ofstream(index_path) << index.dump();
  pipeline = FluxInpaintPipeline::load(model, at::kFloat);
  CHECK(pipeline->recommended_steps() == 2);
  // A request naming no steps runs the model's recommendation; one naming them runs those.
  EditRequest request = request_for(gradient_image(32, 32), box_mask(32, 32, 8, 8, 8), 1, 0);
  CHECK(pipeline->estimate_work(request).steps == 2);
  CHECK(pipeline->edit(request).stats.steps_run == 2);
  request.steps = 3;
  CHECK(pipeline->edit(request).stats.steps_run == 3);
  request.steps = -1;
  CHECK_THROWS_WITH(pipeline->edit(request), Catch::Contains("steps is -1; it must be 1 to 1000"));

  // Texture transfer: off unless the folder recommends it; a request can override either way,
  // and it only ever changes masked pixels.
  CHECK_FALSE(pipeline->recommends_texture_transfer());
  index["_flashps_texture_transfer"] = "yes";
  std::ofstream(index_path) << index.dump();
  CHECK_THROWS_WITH(FluxInpaintPipeline::load(model, at::kFloat), Catch::Contains("_flashps_texture_transfer"));
  index["_flashps_texture_transfer"] = true;
  std::ofstream(index_path) << index.dump();
  pipeline = FluxInpaintPipeline::load(model, at::kFloat);
  CHECK(pipeline->recommends_texture_transfer());
  // Large enough around the hole for whole source tiles (two tokens of this model's side).
  request = request_for(gradient_image(128, 128), box_mask(128, 128, 56, 56, 16), 1, 1);
  const Image textured = pipeline->edit(request).image;
  request.texture_transfer = false;
  const Image plain = pipeline->edit(request).image;
  bool differs_inside = false, differs_outside = false;
  for (int y = 0; y < 128; ++y)
    for (int x = 0; x < 128; ++x) {
      const bool inside = x >= 56 && x < 72 && y >= 56 && y < 72;
      for (int c = 0; c < 3; ++c)
        if (textured.at(x, y, c) != plain.at(x, y, c)) (inside ? differs_inside : differs_outside) = true;
    }
  CHECK(differs_inside);
  CHECK_FALSE(differs_outside);
}

TEST_CASE("the work estimate at submission counts the tokens the edit will run, also through a window",
          "[pipeline][serve]") {
  test::TempDir dir;
  auto pipeline = FluxInpaintPipeline::load(tiny_model(dir), at::kFloat);
  // An image larger than the context: the edit runs a window around the mask, scaled down.
  for (const auto& [size, mask_side] : {std::pair{96, 40}, std::pair{400, 240}, std::pair{400, 60}}) {
    INFO("image " << size << "x" << size * 2 / 3 << ", mask " << mask_side);
    EditRequest request = request_for(gradient_image(size, size * 2 / 3), box_mask(size, size * 2 / 3, 4, 4, mask_side), 1, 1);
    request.context_size = 128;
    const engine::RequestWork estimate = pipeline->estimate_work(request);
    const engine::RequestWork prepared = pipeline->start_edit(request)->work();
    CHECK(estimate.image_tokens == prepared.image_tokens);
    // Pixels vs tokens: a box's edge tokens count whole, so the prepared count is a little larger.
    CHECK(estimate.masked_tokens <= prepared.masked_tokens);
    CHECK(estimate.masked_tokens >= 0.6 * prepared.masked_tokens);
  }
}
