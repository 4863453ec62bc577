// UNet2DConditionModel against diffusers (../shared/fixtures/unet_*_tiny).
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/diagnostics/error.h"
#include "dev/fixture_runners.h"
#include "models/unet/unet_model.h"
#include "support/fixture_report_checks.h"
#include "support/fixtures.h"

using namespace flashps;

namespace {

// Every case of the folder, through the fixture runner `flashps dev run-fixture` uses.
void check_unet_fixture(const std::filesystem::path& dir) {
  const dev::FixtureSet set = dev::load_fixture_set(dir.string());
  const dev::FixtureReport report = dev::run_unet_fixture(set);
  REQUIRE(report.cases.size() == set.cases.size());
  test::require_all_cases_pass(report);
}

}  // namespace

TEST_CASE("SD 1.x inpainting UNet (9 channels, conv projections) matches diffusers", "[models][unet][fixtures]") {
  FLASHPS_REQUIRE_FIXTURE(dir, "unet_sd_inpaint_tiny");
  check_unet_fixture(dir);
}

TEST_CASE("SD 2.x inpainting UNet (linear projections, per-block heads) matches diffusers", "[models][unet][fixtures]") {
  FLASHPS_REQUIRE_FIXTURE(dir, "unet_sd2_inpaint_tiny");
  check_unet_fixture(dir);
}

TEST_CASE("SDXL UNet (text_time embeddings, 2 transformer layers) matches diffusers",
          "[models][unet][fixtures][slow]") {
  FLASHPS_REQUIRE_FIXTURE(dir, "unet_sdxl_tiny");
  check_unet_fixture(dir);
}

TEST_CASE("UNet configs with unsupported channel counts or blocks are named errors", "[models][unet]") {
  nlohmann::json config = {{"in_channels", 5},
                           {"out_channels", 4},
                           {"down_block_types", {"DownBlock2D"}},
                           {"up_block_types", {"UpBlock2D"}},
                           {"block_out_channels", {32}},
                           {"cross_attention_dim", 32},
                           {"attention_head_dim", 8},
                           {"norm_num_groups", 8}};
  CHECK_THROWS_WITH(parse_unet_config(config, "unet/config.json"),
                    Catch::Contains("unet/config.json") && Catch::Contains("in_channels 5") && Catch::Contains("9"));
  config["in_channels"] = 4;
  config["down_block_types"] = {"AttnDownBlock2D"};
  CHECK_THROWS_WITH(parse_unet_config(config, "u.json"), Catch::Contains("AttnDownBlock2D"));
  config["down_block_types"] = {"DownBlock2D"};
  config["attention_head_dim"] = {8, 8};
  CHECK_THROWS_WITH(parse_unet_config(config, "u.json"), Catch::Contains("one per down block"));
}
