// Shared by the C API's engine and batch tests: a tiny model, C images over owned pixels, and an
// event log keyed by request id.
#pragma once
#include <catch2/catch.hpp>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "flashps/flashps.h"
#include "support/tiny_pipeline.h"

namespace flashps::test {

// Pixels a flashps_image points into (the C API copies what it is given).
struct OwnedImage {
  std::vector<uint8_t> pixels;
  flashps_image image{};
  OwnedImage(const Image& from) : pixels(from.pixels) {
    image = {static_cast<uint32_t>(from.width), static_cast<uint32_t>(from.height),
             static_cast<uint32_t>(from.channels), pixels.data()};
  }
  const flashps_image* get() const { return &image; }
};

struct RecordedEvent {
  flashps_request_status status;
  int step, steps;
  std::string message;
  bool preview;
  uint32_t preview_width, preview_height, preview_channels;
};

// Every event of every request; waiters can block until a request reaches a status.
struct ApiEventLog {
  std::mutex mutex;
  std::condition_variable changed;
  std::map<uint64_t, std::vector<RecordedEvent>> events;

  static void record(const flashps_event* event, void* user_data) {
    auto* log = static_cast<ApiEventLog*>(user_data);
    RecordedEvent recorded{event->status, event->step, event->steps, event->message ? event->message : "<NULL>",
                           event->preview != nullptr, 0, 0, 0};
    if (event->preview) {
      recorded.preview_width = event->preview->width;
      recorded.preview_height = event->preview->height;
      recorded.preview_channels = event->preview->channels;
      REQUIRE(event->preview->pixels != nullptr);
    }
    std::lock_guard<std::mutex> lock(log->mutex);
    log->events[event->request_id].push_back(recorded);
    log->changed.notify_all();
  }

  // Blocks until request `id` had an event with `status` (and, for running, at least `step`).
  void wait_for(uint64_t id, flashps_request_status status, int step = 0) {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] {
      for (const RecordedEvent& event : events[id])
        if (event.status == status && event.step >= step) return true;
      return false;
    });
  }

  std::vector<RecordedEvent> of(uint64_t id) {
    std::lock_guard<std::mutex> lock(mutex);
    return events[id];
  }

  flashps_submit_params submit_params() {
    flashps_submit_params params = flashps_submit_default_params();
    params.on_event = &ApiEventLog::record;
    params.user_data = this;
    return params;
  }
};

inline bool is_terminal(flashps_request_status status) {
  return status == FLASHPS_REQUEST_DONE || status == FLASHPS_REQUEST_FAILED || status == FLASHPS_REQUEST_CANCELLED ||
         status == FLASHPS_REQUEST_REJECTED;
}

inline std::string last_error() { return flashps_last_error(); }

}  // namespace flashps::test
