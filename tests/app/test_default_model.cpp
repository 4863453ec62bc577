// The default-model choice (app/default_model.h): what flashps_editor_open(NULL, ...) loads.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "app/default_model.h"
#include "core/diagnostics/log.h"
#include "support/temp_dir.h"
#include "support/source_dir.h"

using flashps::app::choose_model;

namespace {

// Sets an environment variable for one scope (nullptr: unset), then puts it back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_) setenv(name_.c_str(), old_.c_str(), 1);
    else unsetenv(name_.c_str());
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

}  // namespace

TEST_CASE("an explicit model folder wins, then FLASHPS_MODEL, then the bundled model's first existing location",
          "[default_model]") {
  const std::string bundled = flashps::test::source_dir() + "/samples/models/flashps-fill-small";
  CHECK(choose_model("/some/model", {bundled}).dir == "/some/model");
  {
    ScopedEnv model("FLASHPS_MODEL", "/from/the/environment");
    CHECK(choose_model("", {bundled}).dir == "/from/the/environment");
  }
  ScopedEnv no_model("FLASHPS_MODEL", nullptr);
  const flashps::app::ModelChoice choice = choose_model("", {"/nonexistent/flashps-fill-small", bundled});
  CHECK(choice.dir == bundled);
  CHECK_FALSE(choice.random_weights);
  CHECK(choice.notes.empty());
}

TEST_CASE("the library knows where the bundled model is: beside the loaded binary, installed, or in the source tree",
          "[default_model]") {
  const std::vector<std::string> dirs = flashps::app::bundled_model_dirs();
  REQUIRE(dirs.size() == 3);
  for (const std::string& dir : dirs) CHECK_THAT(dir, Catch::EndsWith("/models/flashps-fill-small"));
  CHECK_THAT(dirs[0], Catch::Contains("/share/flashps/models/"));  // <binary's folder>/../share/flashps
  CHECK(dirs[2] == flashps::test::source_dir() + "/samples/models/flashps-fill-small");
}

TEST_CASE("without the bundled model a random-weight stand-in is written once, with logged warnings",
          "[default_model]") {
  flashps::test::TempDir dir;
  ScopedEnv no_model("FLASHPS_MODEL", nullptr);
  ScopedEnv cache("FLASHPS_CACHE_DIR", dir.file("cache/store").c_str());
  std::vector<std::string> warnings;
  flashps::log::configure(
      [&](flashps::log::Level level, const std::string& message) {
        if (level == flashps::log::Level::warning) warnings.push_back(message);
      },
      flashps::log::Level::warning);
  const flashps::app::ModelChoice first = flashps::app::choose_default_model({"/nonexistent/flashps-fill-small"});
  const flashps::app::ModelChoice again = flashps::app::choose_default_model({"/nonexistent/flashps-fill-small"});
  flashps::log::reset();
  CHECK(first.random_weights);
  CHECK(first.dir == dir.file("cache/random-fill-model"));
  CHECK(std::filesystem::exists(std::filesystem::path(first.dir) / "transformer" / "config.json"));
  REQUIRE(warnings.size() == 3);  // written (once), then "using" on each choice
  CHECK_THAT(warnings[0], Catch::Contains("writing a random-weight model"));
  CHECK_THAT(warnings[1], Catch::Contains("RANDOM-WEIGHT"));
  CHECK(again.dir == first.dir);
  CHECK(again.notes.size() == 1);
}
