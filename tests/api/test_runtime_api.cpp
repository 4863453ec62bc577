// flashps/common.h: status names, versions, the per-thread last error, flashps_init (threads,
// logging) and flashps_threads.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "api/api_test_support.h"
#include "core/diagnostics/log.h"
#include "flashps/flashps.h"

using namespace flashps::test::api;

namespace {

struct LogLines {
  std::mutex mutex;
  std::vector<std::pair<flashps_log_level, std::string>> lines;
};

void collect_log(flashps_log_level level, const char* message, void* user_data) {
  auto* log = static_cast<LogLines*>(user_data);
  std::lock_guard<std::mutex> lock(log->mutex);
  log->lines.emplace_back(level, message);
}

// Puts the process back as the test runner set it up: the thread count it had, the default
// stderr log, and FLASHPS_THREADS as it was.
class RuntimeRestorer {
 public:
  RuntimeRestorer() : threads_(flashps_threads()) {
    if (const char* env = std::getenv("FLASHPS_THREADS")) env_ = env, had_env_ = true;
  }
  ~RuntimeRestorer() {
    if (had_env_) setenv("FLASHPS_THREADS", env_.c_str(), 1);
    else unsetenv("FLASHPS_THREADS");
    flashps_runtime_options options = flashps_runtime_default_options();
    options.threads = threads_;
    flashps_init(&options);
  }

 private:
  int threads_;
  std::string env_;
  bool had_env_ = false;
};

}  // namespace

TEST_CASE("every status has its name, and unknown values a placeholder", "[api]") {
  const std::vector<std::pair<flashps_status, std::string>> names = {
      {FLASHPS_OK, "FLASHPS_OK"},
      {FLASHPS_ERROR, "FLASHPS_ERROR"},
      {FLASHPS_CANCELLED, "FLASHPS_CANCELLED"},
      {FLASHPS_INVALID_ARGUMENT, "FLASHPS_INVALID_ARGUMENT"},
      {FLASHPS_NOT_FOUND, "FLASHPS_NOT_FOUND"},
      {FLASHPS_IO_ERROR, "FLASHPS_IO_ERROR"},
      {FLASHPS_CORRUPT_DATA, "FLASHPS_CORRUPT_DATA"},
      {FLASHPS_OUT_OF_MEMORY, "FLASHPS_OUT_OF_MEMORY"},
      {FLASHPS_UNSUPPORTED, "FLASHPS_UNSUPPORTED"},
      {FLASHPS_REJECTED, "FLASHPS_REJECTED"},
      {FLASHPS_DEADLINE_EXCEEDED, "FLASHPS_DEADLINE_EXCEEDED"}};
  for (const auto& [status, name] : names) CHECK(flashps_status_name(status) == name);
  CHECK(std::string(flashps_status_name(static_cast<flashps_status>(99))) == "FLASHPS_UNKNOWN_STATUS");
}

TEST_CASE("versions: the loaded library's match the header's, and the version string is the project's",
          "[api]") {
  CHECK(flashps_api_version() == FLASHPS_API_VERSION);
  CHECK(flashps_api_version() == 8);  // API 8: flashps_server_stats.template_captures, flashps_model_params' file fields
  CHECK(flashps_abi_version() == FLASHPS_ABI_VERSION);
  const std::string version = flashps_version_string();
  CHECK_THAT(version, Catch::Matches("[0-9]+\\.[0-9]+\\.[0-9]+"));
}

TEST_CASE("the last error is per thread and cleared by a successful call", "[api]") {
  flashps_image image{};
  REQUIRE(flashps_image_load("/nonexistent/photo.png", &image) == FLASHPS_NOT_FOUND);
  CHECK_THAT(last_error(), Catch::Contains("/nonexistent/photo.png"));
  std::string seen_by_other_thread = "unset";
  std::thread([&] { seen_by_other_thread = flashps_last_error(); }).join();
  CHECK(seen_by_other_thread.empty());
  CHECK_THAT(last_error(), Catch::Contains("/nonexistent/photo.png"));  // still this thread's
  REQUIRE(flashps_image_create(2, 2, 1, &image) == FLASHPS_OK);
  CHECK(last_error().empty());
  flashps_image_free(&image);
}

TEST_CASE("flashps_init validates its options and sets the thread count", "[api]") {
  RuntimeRestorer restore;
  const flashps_runtime_options defaults = flashps_runtime_default_options();
  CHECK(defaults.struct_size == sizeof(flashps_runtime_options));
  CHECK(defaults.threads == 0);
  CHECK(defaults.keep_freed_memory == 1);
  CHECK(defaults.log == nullptr);
  CHECK(defaults.log_level == FLASHPS_LOG_WARNING);
  const int hardware = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));

  flashps_runtime_options options = defaults;
  options.threads = -1;
  CHECK(flashps_init(&options) == FLASHPS_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("threads is -1"));
  options.threads = 4 * hardware + 1;
  CHECK(flashps_init(&options) == FLASHPS_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("threads is " + std::to_string(4 * hardware + 1)));
  options.threads = 1;
  options.log_level = static_cast<flashps_log_level>(9);
  CHECK(flashps_init(&options) == FLASHPS_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("log_level"));

  options = defaults;
  options.threads = 1;
  REQUIRE(flashps_init(&options) == FLASHPS_OK);
  CHECK(flashps_threads() == 1);
  options.threads = 2;  // callable again: the new count applies
  REQUIRE(flashps_init(&options) == FLASHPS_OK);
  CHECK(flashps_threads() == 2);

  // threads 0: FLASHPS_THREADS when valid.
  setenv("FLASHPS_THREADS", "1", 1);
  options.threads = 0;
  REQUIRE(flashps_init(&options) == FLASHPS_OK);
  CHECK(flashps_threads() == 1);
  // NULL: the defaults.
  REQUIRE(flashps_init(nullptr) == FLASHPS_OK);
  CHECK(flashps_threads() == 1);

  // struct_size rules apply (0 and below the first layout refused).
  options.struct_size = 0;
  CHECK(flashps_init(&options) == FLASHPS_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("flashps_runtime_options.struct_size is 0"));
  options.struct_size = sizeof(size_t) + sizeof(int);
  CHECK(flashps_init(&options) == FLASHPS_INVALID_ARGUMENT);
}

TEST_CASE("flashps_init routes log lines to the caller's callback at its level", "[api]") {
  RuntimeRestorer restore;
  const int hardware = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  LogLines log;
  flashps_runtime_options options = flashps_runtime_default_options();
  options.log = collect_log;
  options.log_user_data = &log;
  unsetenv("FLASHPS_THREADS");  // threads 0 and no variable: every core, without a note
  REQUIRE(flashps_init(&options) == FLASHPS_OK);
  CHECK(flashps_threads() == hardware);
  flashps::log::info("below the level");
  flashps::log::warning("a warning");
  {
    std::lock_guard<std::mutex> lock(log.mutex);
    REQUIRE(log.lines.size() == 1);
    CHECK(log.lines[0].first == FLASHPS_LOG_WARNING);
    CHECK(log.lines[0].second == "a warning");
    log.lines.clear();
  }
  // Lines below the level are dropped.
  options.log_level = FLASHPS_LOG_ERROR;
  REQUIRE(flashps_init(&options) == FLASHPS_OK);
  flashps::log::warning("dropped");
  std::lock_guard<std::mutex> lock(log.mutex);
  CHECK(log.lines.empty());
}

TEST_CASE("flashps_init refuses a malformed FLASHPS_THREADS, naming it and the range", "[api]") {
  RuntimeRestorer restore;
  const std::string range = "it must be a whole number from 1 to " +
                            std::to_string(4 * std::max(1, static_cast<int>(std::thread::hardware_concurrency())));
  flashps_runtime_options options = flashps_runtime_default_options();
  options.threads = 1;
  REQUIRE(flashps_init(&options) == FLASHPS_OK);
  options.threads = 0;
  for (const char* value : {"abc", "-1", "0", "2x", " 2", "99999", "99999999999999999999"}) {
    INFO(value);
    setenv("FLASHPS_THREADS", value, 1);
    CHECK(flashps_init(&options) == FLASHPS_INVALID_ARGUMENT);
    CHECK_THAT(last_error(), Catch::Contains(std::string("FLASHPS_THREADS is \"") + value + "\"") &&
                                 Catch::Contains(range));
    CHECK(flashps_threads() == 1);  // unchanged
  }
  setenv("FLASHPS_THREADS", "2", 1);
  REQUIRE(flashps_init(&options) == FLASHPS_OK);
  CHECK(flashps_threads() == 2);
}
