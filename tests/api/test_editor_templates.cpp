// flashps/editor.h templates: register (whole image or masked, kv and/or hidden), lookup without
// running the model, and edits that reuse the capture.
#include <catch2/catch.hpp>
#include <string>

#include "api/api_test_support.h"
#include "flashps/flashps.h"

using namespace flashps::test::api;

namespace {

int lookup(flashps_editor* editor, const flashps_image& image, const flashps_image& mask,
           const flashps_edit_params& params) {
  int found = -1;
  const flashps_status status = flashps_template_lookup(editor, &image, &mask, &params, &found);
  INFO(flashps_last_error());
  REQUIRE(status == FLASHPS_OK);
  return found;
}

}  // namespace

TEST_CASE("a registered template is found by lookup and reused by the edit (kv)", "[api]") {
  flashps::test::TempDir dir;
  const EditorPtr editor = open_editor(tiny_model(dir));
  const auto image = gradient(32, 32);
  const auto mask = box_mask(32, 32, 0, 0, 16);
  flashps_edit_params params = fast_params();

  CHECK(lookup(editor.get(), image->view, mask->view, params) == 0);
  flashps_edit_stats stats = empty_stats();
  REQUIRE(flashps_template_register(editor.get(), &image->view, &params, &stats) == FLASHPS_OK);
  CHECK(stats.cache_bytes > 0);
  CHECK(stats.steps_run == 2);
  CHECK(stats.total_seconds > 0);
  REQUIRE(stats.template_hash != nullptr);
  const std::string registered_hash = stats.template_hash;
  CHECK(registered_hash.size() >= 16);
  CHECK(registered_hash.find_first_not_of("0123456789abcdef") == std::string::npos);

  CHECK(lookup(editor.get(), image->view, mask->view, params) == 1);
  flashps_edit_params other = params;
  other.seed = 99;  // the seed is not part of a template's identity
  CHECK(lookup(editor.get(), image->view, mask->view, other) == 1);
  other = params;
  other.steps = 3;  // other settings are
  CHECK(lookup(editor.get(), image->view, mask->view, other) == 0);
  other = params;
  other.cache_mode = FLASHPS_CACHE_FULL;  // never reuses
  CHECK(lookup(editor.get(), image->view, mask->view, other) == 0);
  const auto empty_mask = box_mask(32, 32, 0, 0, 0);  // nothing to regenerate: nothing reused
  CHECK(lookup(editor.get(), image->view, empty_mask->view, params) == 0);
  const auto other_image = gradient(32, 32, 40);
  CHECK(lookup(editor.get(), other_image->view, mask->view, params) == 0);

  flashps_image result{};
  REQUIRE(flashps_edit(editor.get(), &image->view, &mask->view, &params, &result, &stats) == FLASHPS_OK);
  flashps_image_free(&result);
  CHECK(stats.cache_hit == 1);
  CHECK(stats.mode_used == FLASHPS_CACHE_KV);
  CHECK(stats.cache_bytes > 0);
  CHECK(stats.compute_saving > 1.0);
  CHECK(stats.note_count == 0);
  CHECK(std::string(stats.template_hash) == registered_hash);  // the capture reused

  REQUIRE(flashps_edit(editor.get(), &other_image->view, &mask->view, &params, &result, &stats) == FLASHPS_OK);
  flashps_image_free(&result);
  CHECK(stats.cache_hit == 0);
  CHECK(std::string(stats.template_hash).empty());  // nothing reused
}

TEST_CASE("masked registration with hidden activations only: lookup follows the kind an edit would use", "[api]") {
  flashps::test::TempDir dir;
  const EditorPtr editor = open_editor(tiny_model(dir));
  const auto image = gradient(32, 32, 10);
  const auto mask = box_mask(32, 32, 16, 16, 16);
  flashps_edit_params params = fast_params();
  flashps_edit_stats stats = empty_stats();
  REQUIRE(flashps_template_register_masked(editor.get(), &image->view, &mask->view, &params, 0, 1, &stats) ==
          FLASHPS_OK);
  CHECK(stats.cache_bytes > 0);

  CHECK(lookup(editor.get(), image->view, mask->view, params) == 1);  // auto: hidden, as captured
  params.cache_mode = FLASHPS_CACHE_HIDDEN;
  CHECK(lookup(editor.get(), image->view, mask->view, params) == 1);
  params.cache_mode = FLASHPS_CACHE_KV;  // not captured: the edit would compute in full
  CHECK(lookup(editor.get(), image->view, mask->view, params) == 0);

  params.cache_mode = FLASHPS_CACHE_AUTO;
  flashps_image result{};
  REQUIRE(flashps_edit(editor.get(), &image->view, &mask->view, &params, &result, &stats) == FLASHPS_OK);
  flashps_image_free(&result);
  CHECK(stats.cache_hit == 1);
  CHECK(stats.mode_used == FLASHPS_CACHE_HIDDEN);
  CHECK(stats.blocks_from_cache + stats.blocks_computed > 0);
}

TEST_CASE("template calls refuse NULLs, nothing to capture and bad params", "[api]") {
  flashps::test::TempDir dir;
  const EditorPtr editor = open_editor(tiny_model(dir));
  const auto image = gradient(32, 32);
  const auto mask = box_mask(32, 32, 0, 0, 16);
  const flashps_edit_params params = fast_params();
  CHECK(flashps_template_register(nullptr, &image->view, &params, nullptr) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_template_register(editor.get(), nullptr, &params, nullptr) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_template_register_masked(editor.get(), &image->view, nullptr, &params, 1, 1, nullptr) ==
        FLASHPS_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("mask is NULL"));
  CHECK(flashps_template_register_masked(editor.get(), &image->view, &mask->view, &params, 0, 0, nullptr) ==
        FLASHPS_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("nothing would be captured"));
  flashps_edit_params bad = params;
  bad.strength = 2.0f;
  CHECK(flashps_template_register(editor.get(), &image->view, &bad, nullptr) == FLASHPS_INVALID_ARGUMENT);
  flashps_edit_stats stats{};  // struct_size 0
  CHECK(flashps_template_register(editor.get(), &image->view, &params, &stats) == FLASHPS_INVALID_ARGUMENT);

  int found = 7;
  CHECK(flashps_template_lookup(nullptr, &image->view, &mask->view, &params, &found) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_template_lookup(editor.get(), nullptr, &mask->view, &params, &found) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_template_lookup(editor.get(), &image->view, nullptr, &params, &found) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_template_lookup(editor.get(), &image->view, &mask->view, &params, nullptr) ==
        FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_template_lookup(editor.get(), &image->view, &mask->view, &bad, &found) == FLASHPS_INVALID_ARGUMENT);
  CHECK(found == 0);  // reset before validation
}

TEST_CASE("a registration's progress callback can cancel it, and nothing is captured then", "[api]") {
  flashps::test::TempDir dir;
  const EditorPtr editor = open_editor(tiny_model(dir));
  const auto image = gradient(32, 32);
  const auto mask = box_mask(32, 32, 0, 0, 16);
  flashps_edit_params params = fast_params();
  params.progress = [](const char*, int, int, double, void*) { return 0; };
  CHECK(flashps_template_register(editor.get(), &image->view, &params, nullptr) == FLASHPS_CANCELLED);
  params.progress = nullptr;
  CHECK(lookup(editor.get(), image->view, mask->view, params) == 0);
}
