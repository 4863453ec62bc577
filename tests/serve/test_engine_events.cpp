// The serving engine's event stream (every state, in order, also with several pool threads and
// inline batching) and pause() waiting for the running step.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <map>
#include <mutex>
#include <thread>

#include "pipeline/flux/flux_inpaint_pipeline.h"
#include "serve/engine.h"
#include "serve/engine_device.h"
#include "support/tiny_pipeline.h"

using namespace flashps;
using namespace flashps::serve;
using namespace flashps::test;

namespace {

struct Log {
  std::mutex mutex;
  std::map<RequestId, std::vector<ServeEvent>> events;
  ServeEventCallback callback() {
    return [this](const ServeEvent& event) {
      std::lock_guard<std::mutex> lock(mutex);
      events[event.id].push_back(event);
    };
  }
};

}  // namespace

TEST_CASE("engine events: every state in order, previews before finishing, terminal with progress",
          "[serve][engine][events]") {
  TempDir dir;
  auto pipeline = std::shared_ptr<FluxInpaintPipeline>(FluxInpaintPipeline::load(tiny_model(dir), at::kFloat));
  for (const std::string batching : {"cb", "naive-cb", "static"}) {
    for (const int pool_threads : {1, 3}) {
      DYNAMIC_SECTION(batching << " with " << pool_threads << " pool threads") {
        EngineOptions options;
        options.batching = batching_config(batching, 4);
        options.pool_threads = pool_threads;
        Log log;
        std::vector<EditHandle> handles;
        {
          Engine engine({engine_device(pipeline)}, options);
          for (int i = 0; i < 6; ++i) {
            SubmitOptions submit;
            submit.on_event = log.callback();
            submit.preview_every_steps = 1;
            handles.push_back(
                engine.submit(request_for(gradient_image(32, 32), box_mask(32, 32, 2 * i, 4, 10), i, 3), submit));
          }
          engine.wait_idle();
        }
        for (const EditHandle& handle : handles) {
          const std::vector<ServeEvent>& events = log.events[handle.id()];
          std::vector<std::string> states;  // names: a failed comparison prints readably
          int step = 0, previews = 0;
          for (const ServeEvent& event : events) {
            if (event.preview) {
              CHECK(event.status == RequestStatus::running);
              ++previews;
              continue;
            }
            states.push_back(request_status_name(event.status));
            if (event.status == RequestStatus::running) CHECK(event.step == ++step);
          }
          CHECK((states == std::vector<std::string>{"queued", "preparing", "ready", "running", "running", "running",
                                                    "finishing", "done"}));
          CHECK(previews == 3);
          // Previews are decoded on the pool, yet none comes after the request's finishing event.
          size_t finishing = 0;
          for (size_t i = 0; i < events.size(); ++i)
            if (events[i].status == RequestStatus::finishing) finishing = i;
          for (size_t i = finishing; i < events.size(); ++i) CHECK_FALSE(events[i].preview);
          CHECK(events.back().step == 3);
          CHECK(events.back().steps == 3);
        }
      }
    }
  }
}

TEST_CASE("engine pause: returns after the running step, and no step runs until resume", "[serve][engine][events]") {
  TempDir dir;
  auto pipeline = std::shared_ptr<FluxInpaintPipeline>(FluxInpaintPipeline::load(tiny_model(dir), at::kFloat));
  EngineOptions options;
  options.batching = batching_config("cb", 4);
  Engine engine({engine_device(pipeline)}, options);
  std::vector<EditHandle> handles;
  for (int i = 0; i < 3; ++i)
    handles.push_back(engine.submit(request_for(gradient_image(64, 64), box_mask(64, 64, 8, 8, 24), i, 1000)));
  while (engine.counters().steps < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // Paused at several points of the step loop: a step in flight when pause() returns would count
  // after it.
  for (int round = 0; round < 5; ++round) {
    engine.pause();
    const int64_t steps = engine.counters().steps;
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    CHECK(engine.counters().steps == steps);
    // While paused the pipeline is the caller's: a step of its own runs undisturbed.
    CHECK(pipeline->edit(request_for(gradient_image(32, 32), box_mask(32, 32, 4, 4, 8), 9, 1)).image.width == 32);
    engine.resume();
    while (engine.counters().steps < steps + 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (EditHandle& handle : handles) handle.cancel();
  engine.wait_idle();
  for (EditHandle& handle : handles) CHECK(handle.status() == RequestStatus::cancelled);
}
