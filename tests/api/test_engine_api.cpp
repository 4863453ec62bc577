// The C API's serving engine (flashps/engine.h) on a tiny random-weight Flux model.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "api/abi_layout.h"
#include "api/engine_test_support.h"
#include "core/runtime/thread_priority.h"
#include "flashps/flashps.h"
#include "support/tiny_pipeline.h"

using namespace flashps::test;

namespace {

struct Engine {
  flashps_engine* handle = nullptr;
  Engine(const std::string& model, flashps_engine_params params = flashps_engine_default_params()) {
    REQUIRE(flashps_engine_open(model.c_str(), &params, &handle) == FLASHPS_OK);
    REQUIRE(handle != nullptr);
  }
  ~Engine() { flashps_engine_close(handle); }
};

struct Request {
  flashps_request* handle = nullptr;
  ~Request() { flashps_request_free(handle); }
};

flashps_edit_params steps(int count) {
  flashps_edit_params params = flashps_edit_default_params();
  params.steps = count;
  return params;
}

flashps_edit_stats stats_struct() {
  flashps_edit_stats stats{};
  stats.struct_size = sizeof(stats);
  return stats;
}

const OwnedImage& test_image() {
  static const OwnedImage image(gradient_image(32, 32));
  return image;
}
const OwnedImage& test_mask() {
  static const OwnedImage mask(box_mask(32, 32, 4, 4, 12));
  return mask;
}

flashps_status submit(flashps_engine* engine, const flashps_edit_params& params, const flashps_submit_params* submit,
                      Request& request) {
  return flashps_engine_submit(engine, test_image().get(), test_mask().get(), &params, submit, &request.handle);
}

// Status names, so a failed comparison prints readably.
std::vector<std::string> statuses(const std::vector<RecordedEvent>& events) {
  std::vector<std::string> result;
  for (const RecordedEvent& event : events) result.push_back(flashps_request_status_name(event.status));
  return result;
}

int terminal_count(const std::vector<RecordedEvent>& events) {
  int count = 0;
  for (const RecordedEvent& event : events) count += is_terminal(event.status);
  return count;
}

}  // namespace

TEST_CASE("engine API: NULL handles and outputs, bad struct sizes and values are refused", "[api][engine_api]") {
  TempDir dir;
  const std::string model = tiny_model(dir);
  flashps_engine* engine = nullptr;
  flashps_engine_params params = flashps_engine_default_params();
  CHECK(params.struct_size == sizeof(params));
  CHECK(flashps_engine_open(model.c_str(), &params, nullptr) == FLASHPS_INVALID_ARGUMENT);

  SECTION("struct_size") {
    params.struct_size = 0;
    CHECK(flashps_engine_open(model.c_str(), &params, &engine) == FLASHPS_INVALID_ARGUMENT);
    CHECK_THAT(last_error(), Catch::Contains("flashps_engine_params"));
    params.struct_size = offsetof(flashps_engine_params, user_data);  // below the first layout
    CHECK(flashps_engine_open(model.c_str(), &params, &engine) == FLASHPS_INVALID_ARGUMENT);
    struct Larger {
      flashps_engine_params params;
      uint64_t tail;
    } larger{flashps_engine_default_params(), 1};
    larger.params.struct_size = sizeof(larger);
    CHECK(flashps_engine_open(model.c_str(), &larger.params, &engine) == FLASHPS_INVALID_ARGUMENT);
    // A zero tail is accepted: the open gets as far as the (missing) folder.
    larger.tail = 0;
    CHECK(flashps_engine_open(dir.file("missing").c_str(), &larger.params, &engine) == FLASHPS_NOT_FOUND);
    CHECK_THAT(last_error(), Catch::Contains(dir.file("missing")));
    CHECK(engine == nullptr);
    // A caller built against API 4 (no compute_nice) is read up to its size; the rest defaults.
    params = flashps_engine_default_params();
    params.struct_size = offsetof(flashps_engine_params, compute_nice);
    params.compute_nice = 99;  // beyond the caller's struct: not read
    REQUIRE(flashps_engine_open(model.c_str(), &params, &engine) == FLASHPS_OK);
    flashps_engine_close(engine);
    engine = nullptr;
  }
  SECTION("values") {
    params.batching = static_cast<flashps_batching>(9);
    CHECK(flashps_engine_open(model.c_str(), &params, &engine) == FLASHPS_INVALID_ARGUMENT);
    CHECK_THAT(last_error(), Catch::Contains("batching"));
    params = flashps_engine_default_params();
    params.policy = static_cast<flashps_balance_policy>(-1);
    CHECK(flashps_engine_open(model.c_str(), &params, &engine) == FLASHPS_INVALID_ARGUMENT);
    CHECK_THAT(last_error(), Catch::Contains("policy"));
    for (int max_batch : {-1, FLASHPS_MAX_BATCH + 1}) {  // the bound every front end uses
      params = flashps_engine_default_params();
      params.max_batch = max_batch;
      CHECK(flashps_engine_open(model.c_str(), &params, &engine) == FLASHPS_INVALID_ARGUMENT);
      CHECK_THAT(last_error(), Catch::Contains("max_batch") && Catch::Contains("0 (per device) to 256"));
    }
    for (int nice : {-1, 20}) {
      params = flashps_engine_default_params();
      params.compute_nice = nice;
      CHECK(flashps_engine_open(model.c_str(), &params, &engine) == FLASHPS_INVALID_ARGUMENT);
      CHECK_THAT(last_error(), Catch::Contains("compute_nice"));
    }
    params = flashps_engine_default_params();
    params.devices = "no such device";
    CHECK(flashps_engine_open(model.c_str(), &params, &engine) != FLASHPS_OK);
    CHECK_THAT(last_error(), Catch::Contains("no such device"));
    CHECK(engine == nullptr);
  }
  SECTION("calls on an open engine") {
    Engine open(model);
    const flashps_edit_params edit = steps(1);
    Request request;
    CHECK(flashps_engine_submit(nullptr, test_image().get(), test_mask().get(), &edit, nullptr, &request.handle) ==
          FLASHPS_INVALID_ARGUMENT);
    CHECK(flashps_engine_submit(open.handle, nullptr, test_mask().get(), &edit, nullptr, &request.handle) ==
          FLASHPS_INVALID_ARGUMENT);
    CHECK(flashps_engine_submit(open.handle, test_image().get(), nullptr, &edit, nullptr, &request.handle) ==
          FLASHPS_INVALID_ARGUMENT);
    CHECK(flashps_engine_submit(open.handle, test_image().get(), test_mask().get(), &edit, nullptr, nullptr) ==
          FLASHPS_INVALID_ARGUMENT);
    flashps_edit_params bad = steps(1001);
    CHECK(submit(open.handle, bad, nullptr, request) == FLASHPS_INVALID_ARGUMENT);
    CHECK_THAT(last_error(), Catch::Contains("steps") && Catch::Contains("1001"));
    bad = steps(1);
    bad.struct_size = 0;
    CHECK(submit(open.handle, bad, nullptr, request) == FLASHPS_INVALID_ARGUMENT);
    flashps_submit_params submit_params = flashps_submit_default_params();
    submit_params.struct_size = 0;
    CHECK(submit(open.handle, edit, &submit_params, request) == FLASHPS_INVALID_ARGUMENT);
    CHECK_THAT(last_error(), Catch::Contains("flashps_submit_params"));
    submit_params = flashps_submit_default_params();
    submit_params.deadline_seconds = -1;
    CHECK(submit(open.handle, edit, &submit_params, request) == FLASHPS_INVALID_ARGUMENT);
    CHECK_THAT(last_error(), Catch::Contains("deadline_seconds"));
    submit_params = flashps_submit_default_params();
    submit_params.preview_every_steps = -2;
    CHECK(submit(open.handle, edit, &submit_params, request) == FLASHPS_INVALID_ARGUMENT);
    flashps_image three_channel_mask = test_image().image;
    CHECK(flashps_engine_submit(open.handle, test_image().get(), &three_channel_mask, &edit, nullptr,
                                &request.handle) == FLASHPS_OK);  // masks may be RGB(A): mask_values
    flashps_request_free(request.handle);
    request.handle = nullptr;
    flashps_image no_pixels = test_image().image;
    no_pixels.pixels = nullptr;
    CHECK(flashps_engine_submit(open.handle, &no_pixels, test_mask().get(), &edit, nullptr, &request.handle) ==
          FLASHPS_INVALID_ARGUMENT);
    CHECK(request.handle == nullptr);

    flashps_model_info info{};
    CHECK(flashps_engine_info(nullptr, &info) == FLASHPS_INVALID_ARGUMENT);
    CHECK(flashps_engine_info(open.handle, nullptr) == FLASHPS_INVALID_ARGUMENT);
    info.struct_size = 0;
    CHECK(flashps_engine_info(open.handle, &info) == FLASHPS_INVALID_ARGUMENT);
    flashps_engine_counters counters{};
    CHECK(flashps_engine_counters_get(open.handle, &counters) == FLASHPS_INVALID_ARGUMENT);  // struct_size 0
    CHECK(flashps_engine_counters_get(nullptr, &counters) == FLASHPS_INVALID_ARGUMENT);
    CHECK(flashps_engine_counters_get(open.handle, nullptr) == FLASHPS_INVALID_ARGUMENT);
    CHECK(flashps_engine_wait_idle(nullptr) == FLASHPS_INVALID_ARGUMENT);
    CHECK(flashps_engine_register_template(nullptr, test_image().get(), nullptr, &edit, nullptr) ==
          FLASHPS_INVALID_ARGUMENT);
    CHECK(flashps_engine_register_template(open.handle, nullptr, nullptr, &edit, nullptr) == FLASHPS_INVALID_ARGUMENT);
    flashps_edit_stats stats{};  // struct_size 0
    CHECK(flashps_engine_register_template(open.handle, test_image().get(), nullptr, &edit, &stats) ==
          FLASHPS_INVALID_ARGUMENT);
    CHECK_THAT(last_error(), Catch::Contains("flashps_edit_stats"));

    int resolved = 7;
    CHECK(flashps_request_id(nullptr) == 0);
    CHECK(flashps_request_get_status(nullptr) == FLASHPS_REQUEST_REJECTED);
    CHECK(flashps_request_wait(nullptr, 0, &resolved) == FLASHPS_INVALID_ARGUMENT);
    CHECK(flashps_request_cancel(nullptr) == FLASHPS_INVALID_ARGUMENT);
    CHECK(flashps_request_result(nullptr, 0, nullptr, nullptr) == FLASHPS_INVALID_ARGUMENT);
    flashps_request_free(nullptr);
    REQUIRE(submit(open.handle, edit, nullptr, request) == FLASHPS_OK);
    CHECK(flashps_request_wait(request.handle, NAN, &resolved) == FLASHPS_INVALID_ARGUMENT);
    CHECK(flashps_request_result(request.handle, -1, nullptr, &stats) == FLASHPS_INVALID_ARGUMENT);
    CHECK(flashps_request_result(request.handle, -1, nullptr, nullptr) == FLASHPS_OK);
  }
  flashps_engine_close(nullptr);
  CHECK(std::string(flashps_request_status_name(FLASHPS_REQUEST_FINISHING)) == "finishing");
  CHECK(std::string(flashps_request_status_name(static_cast<flashps_request_status>(99))) == "unknown");
}

#if defined(__linux__)
namespace {
// Each thread's nice value from /proc (field 19 of its stat line, the 17th after the name).
std::vector<int> thread_nice_values() {
  std::vector<int> values;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream stat(task.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const size_t name_end = line.rfind(')');
    if (name_end == std::string::npos) continue;
    std::istringstream fields(line.substr(name_end + 2));
    std::string field;
    for (int i = 0; i < 17 && fields >> field; ++i) {
    }
    if (fields) values.push_back(std::stoi(field));
  }
  return values;
}
}  // namespace

TEST_CASE("engine API: compute_nice lowers the compute threads' priority, not the caller's", "[api][engine_api]") {
  TempDir dir;
  const std::string model = tiny_model(dir);
  const int caller_nice = flashps::thread_nice_value();
  if (caller_nice > 14) {
    WARN("skipped: the tests already run at nice " << caller_nice);
    return;
  }
  const auto threads_at = [](int nice) {
    const std::vector<int> values = thread_nice_values();
    return std::count(values.begin(), values.end(), nice);
  };
  const long lowered_before = threads_at(caller_nice + 5);
  flashps_engine_params params = flashps_engine_default_params();
  params.compute_nice = 5;
  {
    Engine engine(model, params);
    Request request;
    REQUIRE(submit(engine.handle, steps(1), nullptr, request) == FLASHPS_OK);
    REQUIRE(flashps_request_result(request.handle, 60.0, nullptr, nullptr) == FLASHPS_OK);
    // The worker (and the OpenMP threads it started) run 5 lower; this thread is untouched.
    CHECK(threads_at(caller_nice + 5) > lowered_before);
    CHECK(flashps::thread_nice_value() == caller_nice);
  }
}
#endif

TEST_CASE("engine API: info describes the model and its devices", "[api][engine_api]") {
  TempDir dir;
  const std::string model = tiny_model(dir);
  Engine engine(model);
  flashps_model_info info{};
  info.struct_size = sizeof(info);
  REQUIRE(flashps_engine_info(engine.handle, &info) == FLASHPS_OK);
  CHECK(info.family == FLASHPS_FAMILY_FLUX);
  CHECK(std::string(info.model_dir) == model);
  CHECK(std::string(info.fingerprint).size() > 8);
  CHECK(std::string(info.device) == "cpu");
  CHECK(info.default_steps == 28);
  CHECK(info.is_fill == 1);
  CHECK(info.takes_text == 0);
  CHECK(info.bf16 == 0);
  flashps_engine_counters counters{};
  counters.struct_size = sizeof(counters);
  REQUIRE(flashps_engine_counters_get(engine.handle, &counters) == FLASHPS_OK);
  CHECK(counters.workers == 1);
  CHECK(counters.submitted == 0);
}

TEST_CASE("engine API: requests from 4 threads are served, each with its events in order", "[api][engine_api]") {
  TempDir dir;
  Engine engine(tiny_model(dir));
  ApiEventLog log;
  const flashps_submit_params submit_params = log.submit_params();
  constexpr int kThreads = 4, kPerThread = 3;
  std::vector<std::vector<flashps_request*>> submitted(kThreads);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        flashps_edit_params params = steps(2);
        params.seed = static_cast<uint64_t>(t * 10 + i);
        flashps_request* request = nullptr;
        if (flashps_engine_submit(engine.handle, test_image().get(), test_mask().get(), &params, &submit_params,
                                  &request) != FLASHPS_OK)
          ++failures;
        else
          submitted[t].push_back(request);
      }
    });
  for (std::thread& thread : threads) thread.join();
  REQUIRE(failures == 0);
  REQUIRE(flashps_engine_wait_idle(engine.handle) == FLASHPS_OK);

  const std::vector<std::string> expected{"queued",  "preparing", "ready", "running",
                                          "running", "finishing", "done"};
  std::set<uint64_t> ids;
  for (const auto& requests : submitted)
    for (flashps_request* request : requests) {
      const uint64_t id = flashps_request_id(request);
      ids.insert(id);
      CHECK(flashps_request_get_status(request) == FLASHPS_REQUEST_DONE);
      const std::vector<RecordedEvent> events = log.of(id);
      CHECK(statuses(events) == expected);
      CHECK(terminal_count(events) == 1);
      int step = 0;
      for (const RecordedEvent& event : events)
        if (event.status == FLASHPS_REQUEST_RUNNING) {
          CHECK(event.step == ++step);
          CHECK(event.steps == 2);
          CHECK_FALSE(event.preview);
        }
      for (const RecordedEvent& event : events) CHECK(event.message.empty());
      CHECK(events.back().step == 2);  // the terminal event carries the progress made
      CHECK(events.back().steps == 2);
      flashps_image result{};
      flashps_edit_stats stats = stats_struct();
      stats.notes = "sentinel";
      REQUIRE(flashps_request_result(request, 0, &result, &stats) == FLASHPS_OK);
      CHECK(result.width == 32);
      CHECK(result.channels == 3);
      CHECK(result.pixels[(31 * 32 + 31) * 3] == test_image().pixels[(31 * 32 + 31) * 3]);  // unmasked: kept
      CHECK(stats.steps_run == 2);
      CHECK(stats.width == 32);
      REQUIRE(stats.notes != nullptr);
      CHECK(std::string(stats.notes) != "sentinel");
      flashps_image_free(&result);
      flashps_request_free(request);
    }
  CHECK(ids.size() == kThreads * kPerThread);
  flashps_engine_counters counters{};
  counters.struct_size = sizeof(counters);
  REQUIRE(flashps_engine_counters_get(engine.handle, &counters) == FLASHPS_OK);
  CHECK(counters.submitted == kThreads * kPerThread);
  CHECK(counters.done == kThreads * kPerThread);
  CHECK(counters.steps >= 2);
  CHECK(counters.steps <= 2 * kThreads * kPerThread);
}

TEST_CASE("engine API: cancel mid-run, deadlines, timeouts and a full queue", "[api][engine_api]") {
  TempDir dir;
  const std::string model = tiny_model(dir);
  ApiEventLog log;
  const flashps_submit_params with_events = log.submit_params();

  SECTION("cancel mid-run") {
    Engine engine(model);
    Request request;
    REQUIRE(submit(engine.handle, steps(1000), &with_events, request) == FLASHPS_OK);
    const uint64_t id = flashps_request_id(request.handle);
    log.wait_for(id, FLASHPS_REQUEST_RUNNING, 1);
    // Not resolved in time: an error that says so, not DEADLINE_EXCEEDED.
    flashps_image result{};
    CHECK(flashps_request_result(request.handle, 0, &result, nullptr) == FLASHPS_ERROR);
    CHECK_THAT(last_error(), Catch::Contains("still running"));
    int resolved = 1;
    REQUIRE(flashps_request_wait(request.handle, 0.001, &resolved) == FLASHPS_OK);
    CHECK(resolved == 0);
    REQUIRE(flashps_request_cancel(request.handle) == FLASHPS_OK);
    CHECK(flashps_request_result(request.handle, -1, &result, nullptr) == FLASHPS_CANCELLED);
    CHECK(result.pixels == nullptr);
    CHECK_THAT(last_error(), Catch::Contains("cancelled"));
    CHECK(flashps_request_get_status(request.handle) == FLASHPS_REQUEST_CANCELLED);
    REQUIRE(flashps_request_wait(request.handle, -1, &resolved) == FLASHPS_OK);
    CHECK(resolved == 1);
    CHECK(flashps_request_cancel(request.handle) == FLASHPS_OK);  // no effect once resolved
    REQUIRE(flashps_engine_wait_idle(engine.handle) == FLASHPS_OK);
    const std::vector<RecordedEvent> events = log.of(id);
    CHECK(terminal_count(events) == 1);
    CHECK(events.back().status == FLASHPS_REQUEST_CANCELLED);
    CHECK(events.back().step >= 1);
    CHECK(events.back().step < 1000);
  }
  SECTION("deadline") {
    Engine engine(model);
    flashps_submit_params hurry = with_events;
    hurry.deadline_seconds = 0.2;
    Request request;
    REQUIRE(submit(engine.handle, steps(1000), &hurry, request) == FLASHPS_OK);
    CHECK(flashps_request_result(request.handle, -1, nullptr, nullptr) == FLASHPS_DEADLINE_EXCEEDED);
    CHECK_THAT(last_error(), Catch::Contains("deadline"));
    CHECK(flashps_request_get_status(request.handle) == FLASHPS_REQUEST_FAILED);
    REQUIRE(flashps_engine_wait_idle(engine.handle) == FLASHPS_OK);
    const std::vector<RecordedEvent> events = log.of(flashps_request_id(request.handle));
    CHECK(terminal_count(events) == 1);
    CHECK(events.back().status == FLASHPS_REQUEST_FAILED);
    CHECK_THAT(events.back().message, Catch::Contains("deadline"));
  }
  SECTION("a full queue rejects") {
    // One request at a time (max_batch 1) and one waiting at most: the long first request runs,
    // the second waits for it, the third finds the queue full.
    flashps_engine_params params = flashps_engine_default_params();
    params.max_batch = 1;
    params.max_queued = 1;
    Engine engine(model, params);
    Request running, waiting, rejected;
    REQUIRE(submit(engine.handle, steps(1000), &with_events, running) == FLASHPS_OK);
    log.wait_for(flashps_request_id(running.handle), FLASHPS_REQUEST_RUNNING, 1);
    REQUIRE(submit(engine.handle, steps(1), &with_events, waiting) == FLASHPS_OK);
    CHECK(submit(engine.handle, steps(1), &with_events, rejected) == FLASHPS_REJECTED);
    CHECK(rejected.handle == nullptr);
    CHECK_THAT(last_error(), Catch::Contains("queue full") && Catch::Contains("max_queued 1"));
    REQUIRE(flashps_request_cancel(running.handle) == FLASHPS_OK);
    CHECK(flashps_request_result(waiting.handle, -1, nullptr, nullptr) == FLASHPS_OK);
    REQUIRE(flashps_engine_wait_idle(engine.handle) == FLASHPS_OK);
    flashps_engine_counters counters{};
    counters.struct_size = sizeof(counters);
    REQUIRE(flashps_engine_counters_get(engine.handle, &counters) == FLASHPS_OK);
    CHECK(counters.rejected == 1);
    CHECK(counters.cancelled == 1);
    CHECK(counters.done == 1);
    // The rejected submission's callback is never called (engine.h: an error from submit means no
    // events, so the caller may free user_data at once; the C++ wrapper does, and a late REJECTED
    // event used to call a freed callback: flashps serve crashed on its first 429).
    std::lock_guard<std::mutex> lock(log.mutex);
    int rejected_events = 0;
    for (const auto& [id, events] : log.events)
      for (const RecordedEvent& event : events) rejected_events += event.status == FLASHPS_REQUEST_REJECTED;
    CHECK(rejected_events == 0);
  }
}

TEST_CASE("engine API: previews every N steps, valid during the callback", "[api][engine_api]") {
  TempDir dir;
  Engine engine(tiny_model(dir));
  ApiEventLog log;
  flashps_submit_params submit_params = log.submit_params();
  submit_params.preview_every_steps = 2;
  Request request;
  REQUIRE(submit(engine.handle, steps(4), &submit_params, request) == FLASHPS_OK);
  REQUIRE(flashps_request_result(request.handle, -1, nullptr, nullptr) == FLASHPS_OK);
  REQUIRE(flashps_engine_wait_idle(engine.handle) == FLASHPS_OK);
  std::vector<int> preview_steps;
  const std::vector<RecordedEvent> events = log.of(flashps_request_id(request.handle));
  for (const RecordedEvent& event : events)
    if (event.preview) {
      CHECK(event.status == FLASHPS_REQUEST_RUNNING);
      CHECK(event.preview_width == 32);
      CHECK(event.preview_height == 32);
      CHECK(event.preview_channels == 3);
      preview_steps.push_back(event.step);
    }
  CHECK((preview_steps == std::vector<int>{2, 4}));
  CHECK(events.back().status == FLASHPS_REQUEST_DONE);
}

TEST_CASE("engine API: a template registered between steps serves later edits", "[api][engine_api]") {
  TempDir dir;
  Engine engine(tiny_model(dir));
  ApiEventLog log;
  const flashps_submit_params with_events = log.submit_params();
  // A long request is running while the template registers: the engine pauses between steps.
  Request long_running;
  REQUIRE(submit(engine.handle, steps(1000), &with_events, long_running) == FLASHPS_OK);
  const uint64_t long_id = flashps_request_id(long_running.handle);
  log.wait_for(long_id, FLASHPS_REQUEST_RUNNING, 2);

  const flashps_edit_params params = steps(2);
  flashps_edit_stats registered = stats_struct();
  REQUIRE(flashps_engine_register_template(engine.handle, test_image().get(), test_mask().get(), &params,
                                           &registered) == FLASHPS_OK);
  CHECK(registered.cache_bytes > 0);
  CHECK(registered.steps_run == 2);
  REQUIRE(registered.notes != nullptr);
  REQUIRE(registered.template_hash != nullptr);
  const std::string registered_hash = registered.template_hash;
  CHECK_FALSE(registered_hash.empty());
  // The engine resumed: the long request keeps stepping.
  int steps_seen = 0;
  for (const RecordedEvent& event : log.of(long_id)) steps_seen = std::max(steps_seen, event.step);
  log.wait_for(long_id, FLASHPS_REQUEST_RUNNING, steps_seen + 2);
  REQUIRE(flashps_request_cancel(long_running.handle) == FLASHPS_OK);

  Request edit;
  REQUIRE(submit(engine.handle, params, nullptr, edit) == FLASHPS_OK);
  flashps_edit_stats stats = stats_struct();
  flashps_image result{};
  REQUIRE(flashps_request_result(edit.handle, -1, &result, &stats) == FLASHPS_OK);
  CHECK(stats.cache_hit == 1);
  CHECK(stats.mode_used == FLASHPS_CACHE_KV);
  CHECK(stats.cache_bytes > 0);
  CHECK(std::string(stats.template_hash) == registered_hash);  // owned by the request, not the thread
  flashps_image_free(&result);

  // An older, shorter stats struct gets its own fields only.
  flashps_edit_stats old_stats = stats_struct();
  old_stats.struct_size = flashps::api::kEditStatsV1Size;
  old_stats.notes = "untouched";
  REQUIRE(flashps_request_result(edit.handle, 0, nullptr, &old_stats) == FLASHPS_OK);
  CHECK(old_stats.cache_hit == 1);
  if (old_stats.struct_size <= offsetof(flashps_edit_stats, notes)) CHECK(std::string(old_stats.notes) == "untouched");
}

TEST_CASE("engine API: closing with requests outstanding resolves them; handles stay valid", "[api][engine_api]") {
  TempDir dir;
  const std::string model = tiny_model(dir);
  ApiEventLog log;
  const flashps_submit_params with_events = log.submit_params();
  std::vector<flashps_request*> requests(4, nullptr);
  {
    Engine engine(model);
    for (flashps_request*& request : requests) {
      const flashps_edit_params params = steps(1000);
      REQUIRE(flashps_engine_submit(engine.handle, test_image().get(), test_mask().get(), &params, &with_events,
                                    &request) == FLASHPS_OK);
    }
    log.wait_for(flashps_request_id(requests[0]), FLASHPS_REQUEST_RUNNING, 1);
  }  // closed here
  for (flashps_request* request : requests) {
    int resolved = 0;
    REQUIRE(flashps_request_wait(request, 0, &resolved) == FLASHPS_OK);
    CHECK(resolved == 1);
    CHECK(flashps_request_get_status(request) == FLASHPS_REQUEST_CANCELLED);
    CHECK(flashps_request_result(request, 0, nullptr, nullptr) == FLASHPS_CANCELLED);
    CHECK(flashps_request_cancel(request) == FLASHPS_OK);
    const std::vector<RecordedEvent> events = log.of(flashps_request_id(request));
    CHECK(terminal_count(events) == 1);  // delivered before close returned
    CHECK(events.back().status == FLASHPS_REQUEST_CANCELLED);
    flashps_request_free(request);
  }
}

TEST_CASE("engine API: the default model opens when model_dir is NULL", "[api][engine_api]") {
  flashps_engine* engine = nullptr;
  flashps_engine_params params = flashps_engine_default_params();
  REQUIRE(flashps_engine_open(nullptr, &params, &engine) == FLASHPS_OK);
  flashps_model_info info{};
  info.struct_size = sizeof(info);
  REQUIRE(flashps_engine_info(engine, &info) == FLASHPS_OK);
  CHECK(std::string(info.model_dir) == flashps_default_model_dir());
  flashps_engine_close(engine);
}

TEST_CASE("engine API: loading progress reports 'load' and cancels", "[api][engine_api]") {
  TempDir dir;
  const std::string model = tiny_model(dir);
  struct Seen {
    std::vector<std::string> stages;
    int answer = 1;
  } seen;
  flashps_engine_params params = flashps_engine_default_params();
  params.user_data = &seen;
  params.progress = [](const char* stage, int step, int total, double, void* user_data) {
    auto* state = static_cast<Seen*>(user_data);
    state->stages.push_back(std::string(stage) + " " + std::to_string(step) + "/" + std::to_string(total));
    return state->answer;
  };
  flashps_engine* engine = nullptr;
  REQUIRE(flashps_engine_open(model.c_str(), &params, &engine) == FLASHPS_OK);
  flashps_engine_close(engine);
  CHECK((seen.stages == std::vector<std::string>{"load 0/1", "load 1/1"}));
  seen.answer = 0;
  engine = nullptr;
  CHECK(flashps_engine_open(model.c_str(), &params, &engine) == FLASHPS_CANCELLED);
  CHECK(engine == nullptr);
}

TEST_CASE("engine API: a request's result read from several threads at once", "[api][engine_api]") {
  TempDir dir;
  Engine engine(tiny_model(dir));
  Request request;
  REQUIRE(submit(engine.handle, steps(2), nullptr, request) == FLASHPS_OK);
  std::vector<const char*> notes(4, nullptr);
  std::vector<flashps_status> results(4, FLASHPS_ERROR);
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t)
    readers.emplace_back([&, t] {
      flashps_image image{};
      flashps_edit_stats stats = stats_struct();
      results[t] = flashps_request_result(request.handle, -1, &image, &stats);
      notes[t] = stats.notes;
      flashps_image_free(&image);
    });
  for (std::thread& reader : readers) reader.join();
  for (int t = 0; t < 4; ++t) {
    CHECK(results[t] == FLASHPS_OK);
    CHECK(notes[t] == notes[0]);  // one string, owned by the request
  }
}

TEST_CASE("engine API: templates go to the caller's store or a capture folder", "[api][engine_api]") {
  TempDir dir;
  const std::string model = tiny_model(dir);
  const flashps_edit_params params = steps(1);
  auto captures_in = [](flashps_store* store) {
    flashps_store_stats stats{};
    stats.struct_size = sizeof(stats);
    REQUIRE(flashps_store_get_stats(store, &stats) == FLASHPS_OK);
    return stats.captures;
  };

  flashps_store_params store_params = flashps_store_default_params();
  const std::string shared_folder = dir.file("shared-store");
  store_params.directory = shared_folder.c_str();
  flashps_store* store = nullptr;
  REQUIRE(flashps_store_open(&store_params, &store) == FLASHPS_OK);
  {
    flashps_engine_params engine_params = flashps_engine_default_params();
    engine_params.store = store;
    Engine engine(model, engine_params);
    REQUIRE(flashps_engine_register_template(engine.handle, test_image().get(), test_mask().get(), &params, nullptr) ==
            FLASHPS_OK);
  }
  CHECK(captures_in(store) == 1);
  flashps_store_close(store);

  const std::string capture_dir = dir.file("capture-dir");
  {
    flashps_engine_params engine_params = flashps_engine_default_params();
    engine_params.capture_dir = capture_dir.c_str();
    Engine engine(model, engine_params);
    REQUIRE(flashps_engine_register_template(engine.handle, test_image().get(), nullptr, &params, nullptr) ==
            FLASHPS_OK);
  }
  store_params.directory = capture_dir.c_str();
  store = nullptr;
  REQUIRE(flashps_store_open(&store_params, &store) == FLASHPS_OK);
  CHECK(captures_in(store) == 1);
  flashps_store_close(store);
}

TEST_CASE("engine API: an empty mask returns the template unchanged in every batching mode", "[api][engine_api]") {
  // Nothing to denoise: the request must go straight to post-processing. A batch step used to be
  // given the finished job and fail it ("step() given a job that has finished denoising").
  TempDir dir;
  const std::string model = tiny_model(dir);
  const OwnedImage empty_mask(flashps::Image(32, 32, 1, 0));
  for (const flashps_batching batching : {FLASHPS_BATCHING_CB, FLASHPS_BATCHING_NAIVE_CB, FLASHPS_BATCHING_STATIC}) {
    INFO("batching " << static_cast<int>(batching));
    flashps_engine_params params = flashps_engine_default_params();
    params.batching = batching;
    Engine engine(model, params);
    flashps_request* request = nullptr;
    const flashps_edit_params edit = steps(2);
    REQUIRE(flashps_engine_submit(engine.handle, test_image().get(), empty_mask.get(), &edit, nullptr, &request) ==
            FLASHPS_OK);
    flashps_image result{};
    flashps_edit_stats stats = stats_struct();
    CHECK(flashps_request_result(request, -1, &result, &stats) == FLASHPS_OK);
    CHECK_THAT(stats.notes, Catch::Contains("mask is empty"));
    REQUIRE(result.pixels != nullptr);
    CHECK(std::equal(result.pixels, result.pixels + 32 * 32 * 3, test_image().image.pixels));
    flashps_image_free(&result);
    flashps_request_free(request);
  }
}
