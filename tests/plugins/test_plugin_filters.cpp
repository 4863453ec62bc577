// The first-party filters on the bundled model: they change only the selection (or the new
// border), make the results they promise, and a second run of the same image replays its
// captured template. One of them also runs in flashps-plugin-runner, which then loads libflashps.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>

#include "plugin_test_support.h"

namespace fpp = flashps::plugins;
using namespace flashps::plugins::testing;
namespace fs = std::filesystem;

namespace {

struct FilterFixture {
  fs::path cache = fs::temp_directory_path() / ("flashps-filter-test-" + std::to_string(::getpid()));
  FilterFixture() { fs::remove_all(cache); }
  ~FilterFixture() { fs::remove_all(cache); }

  fpp::PluginHost host(fpp::Isolation isolation = fpp::Isolation::automatic) const {
    fpp::HostOptions options;
    options.search_path = {(fs::path(runner_path()).parent_path().parent_path().parent_path() / "lib" / "flashps" /
                            "plugins").string()};
    options.isolation = isolation;
    options.runner_path = runner_path();
    options.cache_dir = cache.string();
    return fpp::PluginHost::open(options);
  }
};

fpp::RunRequest edit_request(std::map<std::string, std::string> parameters) {
  fpp::RunRequest request;
  request.image = test_picture(128, 128);
  request.mask = box_mask(128, 128, 48, 48, 80, 80);
  request.parameters = std::move(parameters);
  request.parameters["steps"] = "2";
  return request;
}

const uint8_t* pixel(const flashps::sdk::Image& image, uint32_t x, uint32_t y) {
  return &image.pixels[(size_t(y) * image.width + x) * image.channels];
}

bool same_pixel(const flashps::sdk::Image& a, uint32_t ax, uint32_t ay, const flashps::sdk::Image& b, uint32_t bx,
                uint32_t by) {
  return std::equal(pixel(a, ax, ay), pixel(a, ax, ay) + 3, pixel(b, bx, by));
}

int differing_pixels(const flashps::sdk::Image& a, const flashps::sdk::Image& b) {
  int count = 0;
  for (size_t i = 0; i < a.pixels.size(); i += a.channels) count += a.pixels[i] != b.pixels[i];
  return count;
}

}  // namespace

TEST_CASE("generative fill changes the selection only and replays its template the second time", "[plugins][model]") {
  FilterFixture fixture;
  const fpp::PluginHost host = fixture.host();
  const fpp::RunRequest request = edit_request({{"seed", "3"}});
  const fpp::RunResult first = host.run("flashps.generative-fill", request);
  REQUIRE(first.images.size() == 1);
  const auto& result = first.images[0];
  REQUIRE(result.width == 128);
  REQUIRE(result.height == 128);
  CHECK(same_pixel(result, 2, 2, request.image, 2, 2));        // far from the selection: untouched
  CHECK(same_pixel(result, 125, 120, request.image, 125, 120));
  CHECK(differing_pixels(result, request.image) > 100);        // the 32x32 selection was regenerated
  CHECK_FALSE(first.cache_hit);
  CHECK_THAT(first.notes, Catch::VectorContains(std::string("template captured: later edits of this image reuse it")));

  const fpp::RunResult second = host.run("flashps.generative-fill", edit_request({{"seed", "4"}}));
  CHECK(second.cache_hit);
  CHECK(second.template_hash == first.template_hash);
}

TEST_CASE("remove object fills the selection and keeps the rest", "[plugins][model]") {
  FilterFixture fixture;
  const fpp::RunRequest request = edit_request({});
  const fpp::RunResult result = fixture.host().run("flashps.remove-object", request);
  REQUIRE(result.images.size() == 1);
  CHECK(same_pixel(result.images[0], 1, 126, request.image, 1, 126));
  CHECK(differing_pixels(result.images[0], request.image) > 100);
  CHECK_THAT(result.notes, Catch::VectorContains(std::string("mask grown by 8 px")));
}

TEST_CASE("expand canvas returns the larger image with the old one inside", "[plugins][model]") {
  FilterFixture fixture;
  fpp::RunRequest request = edit_request({{"left", "16"}, {"top", "0"}, {"right", "24"}, {"bottom", "8"}});
  request.mask = {};  // needs no selection: the new border is it
  const fpp::RunResult result = fixture.host().run("flashps.expand-canvas", request);
  REQUIRE(result.images.size() == 1);
  CHECK(result.images[0].width == 128 + 16 + 24);
  CHECK(result.images[0].height == 128 + 8);
  CHECK(same_pixel(result.images[0], 16 + 64, 60, request.image, 64, 60));  // the middle of the old picture

  request.parameters = {{"left", "0"}, {"top", "0"}, {"right", "0"}, {"bottom", "0"}};
  CHECK_THROWS_WITH(fixture.host().run("flashps.expand-canvas", request), Catch::Contains("nothing to expand"));
}

TEST_CASE("variations differ by seed, also when run in the plugin runner", "[plugins][model]") {
  FilterFixture fixture;
  for (const auto isolation : {fpp::Isolation::in_process, fpp::Isolation::out_of_process}) {
    INFO("in process: " << (isolation == fpp::Isolation::in_process));
    const fpp::RunResult result = fixture.host(isolation).run("flashps.variations", edit_request({{"count", "3"}}));
    REQUIRE(result.images.size() == 3);
    CHECK(result.in_process == (isolation == fpp::Isolation::in_process));
    CHECK(differing_pixels(result.images[0], result.images[1]) > 0);
    CHECK(differing_pixels(result.images[1], result.images[2]) > 0);
    CHECK(same_pixel(result.images[0], 3, 3, result.images[2], 3, 3));
  }
}

TEST_CASE("a filter that needs a selection refuses to run without one", "[plugins][model]") {
  FilterFixture fixture;
  fpp::RunRequest request = edit_request({});
  request.mask = {};
  try {
    fixture.host().run("flashps.generative-fill", request);
    FAIL("ran without a selection");
  } catch (const fpp::PluginError& error) {
    CHECK(error.failure() == fpp::Failure::bad_request);
    CHECK_THAT(error.what(), Catch::Contains("needs a selection"));
  }
}
