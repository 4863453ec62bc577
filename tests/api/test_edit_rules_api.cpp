// The input rules front ends reach through the public C API (API 6): flashps_edit_params_check
// (the one set of bounds, pipeline/edit_rules.h), names <-> enums of cache modes, batching and
// balance policies, and flashps_mask_for_image (the mask an edit reads, resized as it resizes).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "api/api_test_support.h"
#include "core/image/image.h"
#include "core/mask/mask_ops.h"
#include "flashps/flashps.h"
#include "pipeline/edit_rules.h"

using flashps::test::api::last_error;

TEST_CASE("flashps_edit_params_check: one message per field, the public bounds are the rules'", "[api]") {
  CHECK(flashps_edit_params_check(nullptr) == FLASHPS_OK);  // the defaults
  const flashps_edit_params good = flashps_edit_default_params();
  REQUIRE(flashps_edit_params_check(&good) == FLASHPS_OK);

  struct Case {
    const char* message;  // what the check says (the whole message)
    void (*set)(flashps_edit_params&);
  };
  const std::vector<Case> refused = {
      {"flashps_edit_params.steps is 1001; it must be 0 (the model's recommendation) to 1000",
       [](flashps_edit_params& p) { p.steps = FLASHPS_MAX_STEPS + 1; }},
      {"flashps_edit_params.strength is 0; it must be in (0, 1]", [](flashps_edit_params& p) { p.strength = 0; }},
      {"flashps_edit_params.guidance_scale is 101; it must be 0 to 100 (< 0: the model's default)",
       [](flashps_edit_params& p) { p.guidance_scale = FLASHPS_MAX_GUIDANCE_SCALE + 1; }},
      {"flashps_edit_params.mask_grow_pixels is 16385; it must be 0 to 16384",
       [](flashps_edit_params& p) { p.mask_grow_pixels = FLASHPS_MAX_MASK_PIXELS + 1; }},
      {"flashps_edit_params.mask_feather_pixels is -1; it must be 0 to 16384",
       [](flashps_edit_params& p) { p.mask_feather_pixels = -1; }},
      {"flashps_edit_params.token_dilation is 1025; it must be 0 to 1024",
       [](flashps_edit_params& p) { p.token_dilation = FLASHPS_MAX_TOKEN_DILATION + 1; }},
      {"flashps_edit_params.context_size is 16385; it must be < 0 (the whole image), 0 (the model's native size) "
       "or 1 to 16384",
       [](flashps_edit_params& p) { p.context_size = FLASHPS_MAX_CONTEXT_SIZE + 1; }},
      {"flashps_edit_params.max_sequence_length is 513; it must be 0 (the model's default) to 512",
       [](flashps_edit_params& p) { p.max_sequence_length = FLASHPS_MAX_SEQUENCE_LENGTH + 1; }},
      {"flashps_edit_params.texture_transfer is 2; it must be -1 (the model's choice), 0 (off) or 1 (on)",
       [](flashps_edit_params& p) { p.texture_transfer = 2; }},
      {"flashps_edit_params.cache_mode is 9; it must be FLASHPS_CACHE_AUTO (0), _FULL (1), _KV (2) or _HIDDEN (3)",
       [](flashps_edit_params& p) { p.cache_mode = static_cast<flashps_cache_mode>(9); }},
  };
  for (const Case& bad : refused) {
    INFO(bad.message);
    flashps_edit_params params = good;
    bad.set(params);
    CHECK(flashps_edit_params_check(&params) == FLASHPS_INVALID_ARGUMENT);
    CHECK(last_error() == bad.message);
  }
  // Every bound is inclusive, and the public constants equal the rules' own.
  flashps_edit_params at_limits = good;
  at_limits.steps = FLASHPS_MAX_STEPS;
  at_limits.guidance_scale = FLASHPS_MAX_GUIDANCE_SCALE;
  at_limits.mask_grow_pixels = at_limits.mask_feather_pixels = FLASHPS_MAX_MASK_PIXELS;
  at_limits.token_dilation = FLASHPS_MAX_TOKEN_DILATION;
  at_limits.context_size = FLASHPS_MAX_CONTEXT_SIZE;
  at_limits.max_sequence_length = FLASHPS_MAX_SEQUENCE_LENGTH;
  CHECK(flashps_edit_params_check(&at_limits) == FLASHPS_OK);
  at_limits.guidance_scale = -1;  // the model's default
  at_limits.context_size = -5;    // the whole image
  CHECK(flashps_edit_params_check(&at_limits) == FLASHPS_OK);
  CHECK(FLASHPS_MAX_STEPS == flashps::rules::kMaxSteps);
  CHECK(FLASHPS_MAX_MASK_PIXELS == flashps::rules::kMaxMaskPixels);

  flashps_edit_params missing = good;
  missing.prompt_embeds_path = "/nonexistent/embeds.safetensors";
  CHECK(flashps_edit_params_check(&missing) == FLASHPS_NOT_FOUND);
  CHECK_THAT(last_error(), Catch::Contains("/nonexistent/embeds.safetensors"));
  flashps_edit_params zero_size = good;
  zero_size.struct_size = 0;
  CHECK(flashps_edit_params_check(&zero_size) == FLASHPS_INVALID_ARGUMENT);
}

TEST_CASE("names <-> enums: cache modes, batching and balance policies, one table each", "[api]") {
  for (const flashps_cache_mode mode : {FLASHPS_CACHE_AUTO, FLASHPS_CACHE_FULL, FLASHPS_CACHE_KV, FLASHPS_CACHE_HIDDEN}) {
    flashps_cache_mode parsed = FLASHPS_CACHE_AUTO;
    REQUIRE(flashps_cache_mode_name(mode));
    REQUIRE(flashps_cache_mode_from_name(flashps_cache_mode_name(mode), &parsed) == FLASHPS_OK);
    CHECK(parsed == mode);
  }
  CHECK(std::string(flashps_cache_mode_name(FLASHPS_CACHE_HIDDEN)) == "hidden");
  for (const flashps_batching batching :
       {FLASHPS_BATCHING_CB, FLASHPS_BATCHING_NAIVE_CB, FLASHPS_BATCHING_STATIC, FLASHPS_BATCHING_STATIC_FULL}) {
    flashps_batching parsed = FLASHPS_BATCHING_CB;
    REQUIRE(flashps_batching_from_name(flashps_batching_name(batching), &parsed) == FLASHPS_OK);
    CHECK(parsed == batching);
  }
  CHECK(std::string(flashps_batching_name(FLASHPS_BATCHING_NAIVE_CB)) == "naive-cb");
  for (const flashps_balance_policy policy : {FLASHPS_BALANCE_MASK_AWARE, FLASHPS_BALANCE_ROUND_ROBIN,
                                              FLASHPS_BALANCE_REQUEST_COUNT, FLASHPS_BALANCE_TOKEN_COUNT}) {
    flashps_balance_policy parsed = FLASHPS_BALANCE_MASK_AWARE;
    REQUIRE(flashps_balance_policy_from_name(flashps_balance_policy_name(policy), &parsed) == FLASHPS_OK);
    CHECK(parsed == policy);
  }
  CHECK(std::string(flashps_balance_policy_name(FLASHPS_BALANCE_MASK_AWARE)) == "mask-aware");

  flashps_cache_mode mode{};
  CHECK(flashps_cache_mode_from_name("sometimes", &mode) == FLASHPS_INVALID_ARGUMENT);
  CHECK(last_error() == "unknown cache mode 'sometimes' (expected auto, full, kv or hidden)");
  flashps_batching batching{};
  CHECK(flashps_batching_from_name("fast", &batching) == FLASHPS_INVALID_ARGUMENT);
  CHECK(last_error() == "unknown batching 'fast' (cb, naive-cb, static or static-full)");
  flashps_balance_policy policy{};
  CHECK(flashps_balance_policy_from_name("finish-time", &policy) == FLASHPS_INVALID_ARGUMENT);  // not public
  CHECK(last_error() ==
        "unknown load-balancing policy 'finish-time' (mask-aware, round-robin, request-count or token-count)");
  CHECK(flashps_cache_mode_from_name(nullptr, &mode) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_cache_mode_name(static_cast<flashps_cache_mode>(7)) == nullptr);
  CHECK(flashps_batching_name(static_cast<flashps_batching>(7)) == nullptr);
  CHECK(flashps_balance_policy_name(static_cast<flashps_balance_policy>(-1)) == nullptr);
}

TEST_CASE("flashps_mask_for_image: the mask an edit reads, resized as an edit resizes it", "[api][mask_api]") {
  // A 4x3 blue stroke on black, read at 8x6 (nearest): each pixel becomes a 2x2 block.
  flashps::test::api::OwnedImage blue(4, 3, 3);
  blue.at(1, 1, 2) = 255;
  flashps_image mask{};
  REQUIRE(flashps_mask_for_image(&blue.view, 8, 6, &mask) == FLASHPS_OK);
  REQUIRE(mask.channels == 1);
  REQUIRE(mask.width == 8);
  REQUIRE(mask.height == 6);
  for (uint32_t y = 0; y < 6; ++y)
    for (uint32_t x = 0; x < 8; ++x) {
      INFO(x << ", " << y);
      CHECK(int(mask.pixels[y * 8 + x]) == ((x / 2 == 1 && y / 2 == 1) ? 255 : 0));
    }
  flashps_image_free(&mask);

  // At its own size it is flashps_mask_from_image's values (alpha-only strokes by alpha).
  flashps::test::api::OwnedImage alpha_only(5, 4, 4);
  alpha_only.at(2, 1, 3) = 200;
  alpha_only.at(3, 2, 3) = 90;
  flashps_image values{}, same_size{};
  REQUIRE(flashps_mask_from_image(&alpha_only.view, &values) == FLASHPS_OK);
  REQUIRE(flashps_mask_for_image(&alpha_only.view, 5, 4, &same_size) == FLASHPS_OK);
  CHECK(std::vector<uint8_t>(values.pixels, values.pixels + 20) ==
        std::vector<uint8_t>(same_size.pixels, same_size.pixels + 20));
  CHECK(int(same_size.pixels[1 * 5 + 2]) == 200);
  flashps_image_free(&values);
  flashps_image_free(&same_size);

  CHECK(flashps_mask_for_image(&blue.view, 0, 6, &mask) == FLASHPS_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("the size is 0x6"));
  CHECK(flashps_mask_for_image(nullptr, 8, 6, &mask) == FLASHPS_INVALID_ARGUMENT);
}
