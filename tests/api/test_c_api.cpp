#include <catch2/catch.hpp>
#include <cstddef>
#include <cstring>

#include "dev/random_model.h"
#include "flashps/flashps.h"
#include "support/temp_dir.h"

namespace {

std::string write_tiny_model(const flashps::test::TempDir& dir) {
  flashps::dev::RandomFluxModelSpec spec = flashps::dev::small_fill_model_spec();
  spec.transformer.num_layers = 1;
  spec.transformer.num_single_layers = 1;
  spec.vae_config["block_out_channels"] = {8, 8, 8, 8};
  spec.text_tokens = 4;
  const std::string path = dir.file("model");
  flashps::dev::write_random_flux_model(path, spec);
  return path;
}

struct CancelAfter {
  int calls = 0;
  int limit = 0;
};

int count_and_maybe_cancel(const char*, int, int, double, void* user_data) {
  auto* state = static_cast<CancelAfter*>(user_data);
  return ++state->calls < state->limit;
}

}  // namespace

TEST_CASE("the C API edits, reuses a registered template and cancels", "[api]") {
  flashps::test::TempDir dir;
  flashps_editor* editor = nullptr;
  flashps_editor_params editor_params = flashps_editor_default_params();
  REQUIRE(flashps_editor_open(write_tiny_model(dir).c_str(), &editor_params, &editor) == FLASHPS_OK);

  std::vector<uint8_t> pixels(32 * 32 * 3, 90), mask_pixels(32 * 32, 0);
  for (int y = 0; y < 16; ++y) std::memset(&mask_pixels[y * 32], 255, 16);
  flashps_image image{32, 32, 3, pixels.data()}, mask{32, 32, 1, mask_pixels.data()}, result{};
  flashps_edit_params params = flashps_edit_default_params();
  params.steps = 2;
  flashps_edit_stats stats{};
  stats.struct_size = sizeof(stats);

  REQUIRE(flashps_template_register(editor, &image, &params, &stats) == FLASHPS_OK);
  CHECK(stats.cache_bytes > 0);
  REQUIRE(flashps_edit(editor, &image, &mask, &params, &result, &stats) == FLASHPS_OK);
  CHECK(result.width == 32);
  CHECK(result.channels == 3);
  CHECK(stats.cache_hit == 1);
  CHECK(stats.mode_used == FLASHPS_CACHE_KV);
  // Unmasked pixels come back unchanged.
  CHECK(result.pixels[(31 * 32 + 31) * 3] == 90);
  flashps_image_free(&result);
  CHECK(result.pixels == nullptr);

  // texture_transfer: the model's choice by default; a caller built before it existed passes a
  // shorter struct and whatever lies beyond is never read; a bad value is named in the error.
  CHECK(flashps_edit_default_params().texture_transfer == -1);
  params.texture_transfer = 7;
  CHECK(flashps_edit(editor, &image, &mask, &params, &result, nullptr) == FLASHPS_ERROR);
  CHECK(std::string(flashps_last_error()).find("texture_transfer") != std::string::npos);
  params.struct_size = offsetof(flashps_edit_params, texture_transfer);
  REQUIRE(flashps_edit(editor, &image, &mask, &params, &result, nullptr) == FLASHPS_OK);
  flashps_image_free(&result);
  params.struct_size = sizeof(params);
  params.texture_transfer = 1;
  REQUIRE(flashps_edit(editor, &image, &mask, &params, &result, nullptr) == FLASHPS_OK);
  flashps_image_free(&result);
  params.texture_transfer = -1;

  CancelAfter cancel{0, 1};
  params.progress = count_and_maybe_cancel;
  params.user_data = &cancel;
  CHECK(flashps_edit(editor, &image, &mask, &params, &result, nullptr) == FLASHPS_CANCELLED);
  CHECK(cancel.calls == 1);
  flashps_editor_close(editor);
}

TEST_CASE("the C API reports errors without throwing", "[api]") {
  flashps_editor* editor = nullptr;
  CHECK(flashps_editor_open("/nonexistent/model", nullptr, &editor) == FLASHPS_ERROR);
  CHECK(editor == nullptr);
  CHECK(std::string(flashps_last_error()).find("/nonexistent/model") != std::string::npos);
  CHECK(flashps_editor_open(nullptr, nullptr, &editor) == FLASHPS_INVALID_ARGUMENT);
  flashps_image image{};
  CHECK(flashps_image_load("/nonexistent.png", &image) == FLASHPS_ERROR);
  CHECK(std::string(flashps_last_error()).find("nonexistent.png") != std::string::npos);
  // An older, smaller params struct is accepted: missing fields keep their defaults.
  flashps_edit_params defaults = flashps_edit_default_params();
  CHECK(defaults.struct_size == sizeof(flashps_edit_params));
  CHECK(flashps_api_version() == FLASHPS_API_VERSION);
}

TEST_CASE("the C API opens an editor on a named device, and an older params struct on the CPU", "[api]") {
  flashps::test::TempDir dir;
  const std::string model = write_tiny_model(dir);
  flashps_editor* editor = nullptr;
  flashps_editor_params params = flashps_editor_default_params();
  CHECK(params.device == nullptr);
  params.device = "cpu";
  REQUIRE(flashps_editor_open(model.c_str(), &params, &editor) == FLASHPS_OK);
  flashps_editor_close(editor);

  // A caller built before `device` existed passes a shorter struct: the field is never read.
  params.device = "no such device";
  params.struct_size = offsetof(flashps_editor_params, device);
  editor = nullptr;
  REQUIRE(flashps_editor_open(model.c_str(), &params, &editor) == FLASHPS_OK);
  flashps_editor_close(editor);

  params.struct_size = sizeof(params);
  editor = nullptr;
  CHECK(flashps_editor_open(model.c_str(), &params, &editor) == FLASHPS_ERROR);
  CHECK(editor == nullptr);
  CHECK(std::string(flashps_last_error()).find("unknown device \"no such device\"") != std::string::npos);
}
