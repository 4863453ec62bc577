// Isolation: a third-party plugin that crashes, aborts, hangs, allocates without bound, writes
// garbage to its channel or exits mid-run is reported for what it did, and the host's next run
// succeeds. Also the normal paths: results, errors, cancel, scratch memory.
#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "plugin_test_support.h"

namespace fpp = flashps::plugins;
using namespace flashps::plugins::testing;

namespace {

fpp::RunRequest small_request() {
  fpp::RunRequest request;
  request.image = test_picture(48, 32);
  request.mask = box_mask(48, 32, 8, 8, 24, 24);
  return request;
}

// Runs `name` and returns the failure it ends with (the test fails if it succeeds).
fpp::PluginError failure_of(const fpp::PluginHost& host, const std::string& name) {
  try {
    host.run(name, small_request());
  } catch (const fpp::PluginError& error) {
    return error;
  }
  FAIL(name << " succeeded");
  return fpp::PluginError(fpp::Failure::host_error, "");
}

void check_host_still_works(const fpp::PluginHost& good) {
  const fpp::RunResult result = good.run("test.invert", small_request());
  REQUIRE(result.images.size() == 1);
  CHECK_FALSE(result.in_process);
}

}  // namespace

TEST_CASE("faulty plugins are reported and the host keeps working", "[plugins][isolation]") {
  // 1 GiB is plenty for the runner (it loads no model) and stops test.leak quickly; memory limits
  // cannot apply under AddressSanitizer, whose shadow memory alone exceeds them.
  const int64_t memory_limit = under_sanitizer() ? -1 : int64_t(1) << 30;
  const fpp::PluginHost faulty = host_for("faulty", fpp::Isolation::automatic, 3, memory_limit);
  const fpp::PluginHost good = host_for("good");
  REQUIRE(faulty.problems().empty());
  REQUIRE(faulty.plugins().size() == 6);
  for (const auto& plugin : faulty.plugins()) CHECK_FALSE(plugin.in_process);

  SECTION("segfault") {
    const fpp::PluginError error = failure_of(faulty, "test.segfault");
    CHECK(error.failure() == fpp::Failure::crashed);
    CHECK_THAT(error.what(), Catch::Contains("plugin test.segfault crashed while running") &&
                                 Catch::Contains("SIGSEGV"));
  }
  SECTION("abort") {
    const fpp::PluginError error = failure_of(faulty, "test.abort");
    CHECK(error.failure() == fpp::Failure::crashed);
    CHECK_THAT(error.what(), Catch::Contains("SIGABRT"));
  }
  SECTION("hang: killed after the idle timeout") {
    const fpp::PluginError error = failure_of(faulty, "test.hang");
    CHECK(error.failure() == fpp::Failure::hung);
    CHECK_THAT(error.what(), Catch::Contains("nothing was heard for 3 s, so it was killed"));
  }
  SECTION("unbounded allocation: stopped at the memory limit") {
    if (under_sanitizer()) return;
    // Filling 1 GiB takes seconds on a busy machine: a longer silence is allowed here.
    const fpp::PluginHost patient = host_for("faulty", fpp::Isolation::automatic, 120, memory_limit);
    const fpp::PluginError error = failure_of(patient, "test.leak");
    CHECK(error.failure() == fpp::Failure::out_of_memory);
    CHECK_THAT(error.what(), Catch::Contains("ran out of memory") && Catch::Contains("1024 MiB"));
  }
  SECTION("garbage on the channel") {
    const fpp::PluginError error = failure_of(faulty, "test.garbage");
    CHECK(error.failure() == fpp::Failure::protocol);
    CHECK_THAT(error.what(), Catch::Contains("malformed message"));
  }
  SECTION("exit in the middle of a run") {
    const fpp::PluginError error = failure_of(faulty, "test.exit");
    CHECK(error.failure() == fpp::Failure::exited);
    CHECK_THAT(error.what(), Catch::Contains("without finishing") && Catch::Contains("exited with status 0"));
  }
  check_host_still_works(good);
}

TEST_CASE("a plugin's results, notes and errors come back in and out of process", "[plugins]") {
  for (const auto isolation : {fpp::Isolation::out_of_process, fpp::Isolation::in_process}) {
    INFO("in process: " << (isolation == fpp::Isolation::in_process));
    const fpp::PluginHost host = host_for("good", isolation);
    fpp::RunRequest request = small_request();
    request.parameters = {{"count", "3"}};
    const fpp::RunResult results = host.run("test.results", request);
    REQUIRE(results.images.size() == 3);
    CHECK(results.images[2].pixels[5] == 20);
    CHECK(results.in_process == (isolation == fpp::Isolation::in_process));

    // Only the unselected pixels keep their values.
    const fpp::RunResult inverted = host.run("test.invert", small_request());
    const auto& before = small_request().image.pixels;
    const auto& after = inverted.images.at(0).pixels;
    const size_t inside = (size_t(10) * 48 + 10) * 3, outside = (size_t(2) * 48 + 40) * 3;
    CHECK(after[inside] == 255 - before[inside]);
    CHECK(after[outside] == before[outside]);

    request = small_request();
    request.parameters = {{"fail_with", "the moon is in the wrong phase"}};
    try {
      host.run("test.invert", request);
      FAIL("no error");
    } catch (const fpp::PluginError& error) {
      CHECK(error.failure() == fpp::Failure::plugin_error);
      CHECK_THAT(error.what(), Catch::Contains("plugin test.invert: the moon is in the wrong phase"));
    }
  }
}

TEST_CASE("bad parameter values are refused before the plugin runs", "[plugins]") {
  const fpp::PluginHost host = host_for("good");
  fpp::RunRequest request = small_request();
  const auto refusal = [&](std::map<std::string, std::string> parameters) {
    request.parameters = std::move(parameters);
    try {
      host.run("test.results", request);
    } catch (const fpp::PluginError& error) {
      CHECK(error.failure() == fpp::Failure::bad_request);
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(refusal({{"count", "9"}}), Catch::Contains("parameter count: 9 is outside 1..4"));
  CHECK_THAT(refusal({{"count", "two"}}), Catch::Contains("'two' is not a whole number"));
  CHECK_THAT(refusal({{"colour", "red"}}), Catch::Contains("has no parameter 'colour' (it takes: count)"));
  try {
    host.run("test.nothing", request);
    FAIL("ran a plugin that does not exist");
  } catch (const fpp::PluginError& error) {
    CHECK(error.failure() == fpp::Failure::not_found);
  }
}

TEST_CASE("a run is cancelled from its progress function", "[plugins]") {
  for (const auto isolation : {fpp::Isolation::out_of_process, fpp::Isolation::in_process}) {
    const fpp::PluginHost host = host_for("good", isolation);
    fpp::RunRequest request;
    request.image = test_picture(64, 160);  // 10 bands of 16 rows, 200 ms each
    request.parameters = {{"delay_ms", "200"}};
    int reports = 0;
    request.progress = [&](const fpp::Progress&) { return ++reports < 3; };
    try {
      host.run("test.invert", request);
      FAIL("not cancelled");
    } catch (const fpp::PluginError& error) {
      CHECK(error.failure() == fpp::Failure::cancelled);
    }
    CHECK(reports == 3);  // asked no more once it said stop, long before the 10 bands were done
  }
}

TEST_CASE("scratch memory is counted against the run's budget", "[plugins]") {
  fpp::HostOptions options;
  options.search_path = {test_plugins_dir("good")};
  options.runner_path = runner_path();
  options.scratch_limit_bytes = int64_t(64) << 20;
  const fpp::PluginHost host = fpp::PluginHost::open(options);
  fpp::RunRequest request = small_request();
  request.parameters = {{"megabytes", "32"}};
  CHECK(host.run("test.scratch", request).images.size() == 1);
  request.parameters = {{"megabytes", "128"}};
  try {
    host.run("test.scratch", request);
    FAIL("over budget but accepted");
  } catch (const fpp::PluginError& error) {
    CHECK_THAT(error.what(), Catch::Contains("scratch memory refused"));
  }
}
