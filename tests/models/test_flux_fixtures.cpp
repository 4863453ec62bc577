#include <catch2/catch.hpp>

#include "dev/fixture_runners.h"
#include "support/fixtures.h"

using namespace flashps;

namespace {

void require_fixture_passes(const std::filesystem::path& dir) {
  dev::FixtureSet set = dev::load_fixture_set(dir.string());
  dev::FixtureReport report = dev::run_flux_transformer_fixture(set);
  REQUIRE(report.cases.size() == set.cases.size());
  for (const auto& result : report.cases) {
    INFO("case " << result.name << (result.error.empty() ? "" : ": " + result.error));
    REQUIRE(result.error.empty());
    for (const auto& output : result.outputs) {
      INFO("output " << output.output << " max abs error " << output.max_abs_error
                     << " (worst error/tolerance " << output.worst_ratio << ")");
      CHECK(output.passed);
    }
  }
}

}  // namespace

TEST_CASE("Flux Fill transformer matches diffusers", "[flux][fixture]") {
  FLASHPS_REQUIRE_FIXTURE(dir, "flux_fill_tiny");
  require_fixture_passes(dir);
}

TEST_CASE("Flux transformer with guidance embedding matches diffusers", "[flux][fixture]") {
  FLASHPS_REQUIRE_FIXTURE(dir, "flux_guidance_tiny");
  require_fixture_passes(dir);
}
