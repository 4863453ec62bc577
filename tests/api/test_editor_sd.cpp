// flashps/editor.h on a Stable Diffusion folder (support/tiny_sd_folder.h, from the golden
// fixtures): the same editor calls as Flux, with text prompts, hidden-only templates, and the
// refusals that are Stable Diffusion's (kv replay, non-CPU devices).
#include <ATen/Context.h>
#include <catch2/catch.hpp>
#include <string>

#include "api/api_test_support.h"
#include "flashps/flashps.h"
#include "support/fixtures.h"
#include "support/tiny_sd_folder.h"

using namespace flashps::test::api;

TEST_CASE("an editor opens a Stable Diffusion folder, edits with prompts and reuses its templates",
          "[api][fixtures][slow]") {
  const auto fixtures = flashps::test::fixtures_root();
  if (!fixtures) {
    WARN("SKIPPED: ../shared/fixtures not found (set FLASHPS_FIXTURES_DIR): the SD folder is built from them");
    return;
  }
  flashps::test::TempDir dir;
  const std::string folder = flashps::test::tiny_sd_folder(*fixtures, dir, 9);
  const EditorPtr editor = open_editor(folder);
  flashps_model_info info{};
  info.struct_size = sizeof(info);
  REQUIRE(flashps_editor_info(editor.get(), &info) == FLASHPS_OK);
  CHECK(info.family == FLASHPS_FAMILY_STABLE_DIFFUSION);
  CHECK(std::string(info.model_dir) == folder);
  CHECK(std::string(info.device) == "cpu");
  CHECK(info.takes_text == 1);
  CHECK(info.is_fill == 1);  // a 9-channel inpainting UNet
  CHECK(info.unconditional == 0);
  CHECK(info.default_steps == 28);
  CHECK(info.native_size == 0);

  const auto image = gradient(40, 36);
  const auto mask = box_mask(40, 36, 8, 8, 16);
  flashps_edit_params params = fast_params();
  params.prompt = "a red apple";
  params.negative_prompt = "blurry";
  flashps_image result{};
  flashps_edit_stats stats = empty_stats();
  REQUIRE(flashps_edit(editor.get(), &image->view, &mask->view, &params, &result, &stats) == FLASHPS_OK);
  CHECK(result.width == 40);
  CHECK(result.height == 36);
  flashps_image_free(&result);
  CHECK(stats.steps_run == 3);  // PLMS: steps + 1 model evaluations
  CHECK(stats.cache_hit == 0);

  // kv replay does not apply to UNets: refused, clearly, by edit and lookup alike.
  params.cache_mode = FLASHPS_CACHE_KV;
  CHECK(flashps_edit(editor.get(), &image->view, &mask->view, &params, &result, nullptr) == FLASHPS_UNSUPPORTED);
  CHECK_THAT(last_error(), Catch::Contains("Stable Diffusion") && Catch::Contains("FLASHPS_CACHE_HIDDEN"));
  int found = -1;
  CHECK(flashps_template_lookup(editor.get(), &image->view, &mask->view, &params, &found) == FLASHPS_UNSUPPORTED);
  params.cache_mode = FLASHPS_CACHE_AUTO;
  CHECK(flashps_template_register_masked(editor.get(), &image->view, &mask->view, &params, 1, 0, nullptr) ==
        FLASHPS_UNSUPPORTED);

  REQUIRE(flashps_template_lookup(editor.get(), &image->view, &mask->view, &params, &found) == FLASHPS_OK);
  CHECK(found == 0);
  REQUIRE(flashps_template_register(editor.get(), &image->view, &params, &stats) == FLASHPS_OK);
  CHECK(stats.cache_bytes > 0);
  REQUIRE(flashps_template_lookup(editor.get(), &image->view, &mask->view, &params, &found) == FLASHPS_OK);
  CHECK(found == 1);
  REQUIRE(flashps_edit(editor.get(), &image->view, &mask->view, &params, &result, &stats) == FLASHPS_OK);
  flashps_image_free(&result);
  CHECK(stats.cache_hit == 1);
  CHECK(stats.mode_used == FLASHPS_CACHE_HIDDEN);
  CHECK(stats.compute_saving > 1.0);
}

TEST_CASE("Stable Diffusion folders open on the CPU; a GPU this machine lacks is refused", "[api][fixtures]") {
  const auto fixtures = flashps::test::fixtures_root();
  if (!fixtures) {
    WARN("SKIPPED: ../shared/fixtures not found (set FLASHPS_FIXTURES_DIR): the SD folder is built from them");
    return;
  }
  flashps::test::TempDir dir;
  const std::string folder = flashps::test::tiny_sd_folder(*fixtures, dir, 4);
  flashps_editor_params params = flashps_editor_default_params();
  if (!at::hasCUDA()) {  // with a GPU, SD opens there ([cuda] tests compare it with the CPU)
    params.device = "cuda";
    flashps_editor* editor = nullptr;
    CHECK(flashps_editor_open(folder.c_str(), &params, &editor) == FLASHPS_UNSUPPORTED);
    CHECK(editor == nullptr);
  }
  params.device = "cpu";
  const EditorPtr opened = open_editor(folder, &params);
  flashps_model_info info{};
  info.struct_size = sizeof(info);
  REQUIRE(flashps_editor_info(opened.get(), &info) == FLASHPS_OK);
  CHECK(info.is_fill == 0);  // the 4-channel UNet blends latents instead
}
