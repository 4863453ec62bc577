// Discovery and the ABI: every malformed plugin is refused with a reason its author can act on,
// a plugin built against the frozen version-1 header loads, and headers only ever append fields.
#include <catch2/catch.hpp>
#include <cstddef>
#include <filesystem>
#include <string>

#include "plugin_test_support.h"

extern "C" {
extern const size_t flashps_frozen_v1_layout[];
extern const size_t flashps_frozen_v1_layout_count;
extern const size_t flashps_current_layout[];
extern const size_t flashps_current_layout_count;
}

namespace fpp = flashps::plugins;
using namespace flashps::plugins::testing;

namespace {

// The problem reported for the library whose file name contains `file`.
std::string problem_for(const fpp::PluginHost& host, const std::string& file) {
  for (const auto& problem : host.problems())
    if (problem.path.find("/" + file + ".so") != std::string::npos) return problem.message;
  return "";
}

}  // namespace

TEST_CASE("malformed plugins are refused at discovery, each with its reason", "[plugins]") {
  {
    const fpp::PluginHost host = host_for("bad", fpp::Isolation::out_of_process);
    CHECK(host.plugins().empty());
    CHECK_THAT(problem_for(host, "test_future_abi"), Catch::Contains("built for plugin ABI 2") &&
                                                         Catch::Contains("update FlashPS"));
    CHECK_THAT(problem_for(host, "test_no_entry"), Catch::Contains("exports no flashps_plugin_entry"));
    CHECK_THAT(problem_for(host, "test_entry_null"), Catch::Contains("returned no descriptor"));
    CHECK_THAT(problem_for(host, "test_bad_schema_key"), Catch::Contains("'Bad Key'"));
    CHECK_THAT(problem_for(host, "test_bad_schema_range"), Catch::Contains("minimum 10 is above its maximum 1"));
    CHECK_THAT(problem_for(host, "test_bad_schema_default"), Catch::Contains("default 50 is outside 0..10"));
    CHECK_THAT(problem_for(host, "test_bad_choice"), Catch::Contains("\"d\" is not one of \"a|b|c\""));
    CHECK_THAT(problem_for(host, "test_duplicate_key"), Catch::Contains("two parameters are called 'x'"));
    CHECK_THAT(problem_for(host, "test_null_main"), Catch::Contains("no main function"));
    CHECK_THAT(problem_for(host, "test_crash_describe"), Catch::Contains("crashed while describing itself") &&
                                                             Catch::Contains("SIGSEGV"));
    CHECK(host.problems().size() == 10);
  }
}

TEST_CASE("in-process discovery refuses the same descriptors", "[plugins]") {
  // Loaded into this process (no crashing plugin among these): the same checks apply.
  // test_crash_describe would take this process down (in-process is for trusted code), so a copy
  // of the folder without it.
  fpp::HostOptions options;
  options.isolation = fpp::Isolation::in_process;
  options.runner_path = runner_path();
  const auto copy = std::filesystem::temp_directory_path() / "flashps-bad-plugins-in-process";
  std::filesystem::remove_all(copy);
  std::filesystem::create_directories(copy);
  for (const auto& entry : std::filesystem::directory_iterator(test_plugins_dir("bad")))
    if (entry.path().filename() != "test_crash_describe.so")
      std::filesystem::copy_file(entry.path(), copy / entry.path().filename());
  options.search_path = {copy.string()};
  const fpp::PluginHost host = fpp::PluginHost::open(options);
  CHECK(host.plugins().empty());
  CHECK(host.problems().size() == 9);
  CHECK_THAT(problem_for(host, "test_future_abi"), Catch::Contains("built for plugin ABI 2"));
  CHECK_THAT(problem_for(host, "test_bad_choice"), Catch::Contains("is not one of"));
  std::filesystem::remove_all(copy);
}

TEST_CASE("the first plugin of a name wins and the second is reported", "[plugins]") {
  const fpp::PluginHost host = host_for("duplicate");
  REQUIRE(host.plugins().size() == 1);
  CHECK(host.plugins()[0].title == "Duplicate A (test)");
  REQUIRE(host.problems().size() == 1);
  CHECK_THAT(host.problems()[0].message, Catch::Contains("test_duplicate_b.so") &&
                                             Catch::Contains("the name test.duplicate is taken by"));
}

TEST_CASE("a plugin built against the frozen version-1 header loads and runs", "[plugins]") {
  for (const auto isolation : {fpp::Isolation::out_of_process, fpp::Isolation::in_process}) {
    const fpp::PluginHost host = host_for("frozen_v1", isolation);
    REQUIRE(host.problems().empty());
    REQUIRE(host.find("test.frozen-v1") != nullptr);
    CHECK(host.find("test.frozen-v1")->abi_version == 1);
    fpp::RunRequest request;
    request.image = test_picture(32, 16);
    request.mask = box_mask(32, 16, 0, 0, 16, 16);
    const fpp::RunResult result = host.run("test.frozen-v1", request);
    REQUIRE(result.images.size() == 1);
    CHECK(result.images[0].pixels[0] == 255 - request.image.pixels[0]);        // selected: inverted
    CHECK(result.images[0].pixels[31 * 3] == request.image.pixels[31 * 3]);    // not selected: kept
  }
}

TEST_CASE("later plugin headers only append: version 1's offsets and constants are unchanged", "[plugins]") {
  REQUIRE(flashps_current_layout_count >= flashps_frozen_v1_layout_count);
  for (size_t i = 0; i < flashps_frozen_v1_layout_count; ++i) {
    INFO("layout entry " << i);
    CHECK(flashps_current_layout[i] == flashps_frozen_v1_layout[i]);
  }
}

TEST_CASE("the first-party plugins and the sample are found", "[plugins]") {
  fpp::HostOptions options;
  options.runner_path = runner_path();
  options.search_path = {(std::filesystem::path(runner_path()).parent_path().parent_path().parent_path() / "samples" /
                          "plugin_sample").string()};
  for (const auto& folder : std::vector<std::string>{
           (std::filesystem::path(runner_path()).parent_path().parent_path().parent_path() / "lib" / "flashps" /
            "plugins").string()})
    options.search_path.push_back(folder);
  const fpp::PluginHost host = fpp::PluginHost::open(options);
  CHECK(host.problems().empty());
  for (const char* name : {"flashps.generative-fill", "flashps.remove-object", "flashps.expand-canvas",
                           "flashps.variations", "sample.posterize-selection"}) {
    INFO(name);
    const fpp::PluginInfo* plugin = host.find(name);
    REQUIRE(plugin != nullptr);
    const bool first_party = std::string(name).rfind("flashps.", 0) == 0;
    CHECK(plugin->first_party == first_party);
    CHECK(plugin->in_process == first_party);  // third-party code runs isolated by default
  }
}
