// The serving engine on a real (tiny) Flux pipeline and CPU worker threads.
#include <ATen/ATen.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "core/diagnostics/error.h"
#include "pipeline/flux/flux_inpaint_pipeline.h"
#include "serve/engine.h"
#include "serve/engine_device.h"
#include "serve_tools/simulator.h"
#include "support/tiny_pipeline.h"

using namespace flashps;
using namespace flashps::serve;
using namespace flashps::test;

namespace {

std::shared_ptr<FluxInpaintPipeline> tiny_pipeline(const TempDir& dir) {
  return std::shared_ptr<FluxInpaintPipeline>(FluxInpaintPipeline::load(tiny_model(dir), at::kFloat));
}

EngineOptions options_for(const std::string& batching, int max_batch, size_t max_queued = 1000) {
  EngineOptions options;
  options.batching = batching_config(batching, max_batch);
  options.max_queued = max_queued;
  return options;
}

// Records every event per request, to check that each resolves exactly once.
struct EventLog {
  std::mutex mutex;
  std::map<RequestId, std::vector<RequestStatus>> events;
  std::vector<RequestId> denoised_order;  // first "finishing" event of each request
  ServeEventCallback callback() {
    return [this](const ServeEvent& event) {
      std::lock_guard<std::mutex> lock(mutex);
      events[event.id].push_back(event.status);
      if (event.status == RequestStatus::finishing) denoised_order.push_back(event.id);
    };
  }
  int terminal_events(RequestId id) {
    std::lock_guard<std::mutex> lock(mutex);
    int count = 0;
    for (RequestStatus status : events[id])
      count += status == RequestStatus::done || status == RequestStatus::failed ||
               status == RequestStatus::cancelled || status == RequestStatus::rejected;
    return count;
  }
};

}  // namespace

TEST_CASE("every request resolves exactly once under load, cancellations and deadlines", "[serve][engine]") {
  TempDir dir;
  auto pipeline = tiny_pipeline(dir);
  EventLog log;
  const int count = 500;
  std::vector<EditHandle> handles;
  {
    Engine engine({engine_device(pipeline)}, options_for("cb", 8, 64));
    std::mt19937 rng(7);
    for (int i = 0; i < count; ++i) {
      EditRequest request = request_for(gradient_image(32, 32), box_mask(32, 32, rng() % 16, rng() % 16, 4 + rng() % 12),
                                        i, 1 + rng() % 3);
      SubmitOptions submit;
      submit.on_event = log.callback();
      if (rng() % 5 == 0) submit.deadline_seconds = 0.001 * (rng() % 50);
      handles.push_back(engine.submit(std::move(request), submit));
      if (rng() % 4 == 0) handles[rng() % handles.size()].cancel();
      if (rng() % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    for (int i = 0; i < 20; ++i) handles[rng() % handles.size()].cancel();
    engine.wait_idle();
    const EngineCounters counters = engine.counters();
    CHECK(counters.submitted == count);
    CHECK(counters.done + counters.failed + counters.cancelled + counters.rejected == count);
    CHECK(counters.done > 0);
    CHECK(counters.cancelled > 0);
    CHECK(counters.rejected > 0);  // 64 waiting at most: the burst overflows
  }
  std::map<RequestStatus, int> outcomes;
  for (EditHandle& handle : handles) {
    REQUIRE(handle.wait_for(0));
    const RequestStatus status = handle.status();
    ++outcomes[status];
    CHECK(log.terminal_events(handle.id()) == 1);
    if (status == RequestStatus::done) {
      CHECK(handle.wait().image.width == 32);
    } else if (status == RequestStatus::cancelled) {
      CHECK_THROWS_AS(handle.wait(), Cancelled);
    } else if (status == RequestStatus::rejected) {
      CHECK_THROWS_AS(handle.wait(), RequestRejected);
    } else {
      REQUIRE(status == RequestStatus::failed);
      CHECK_THROWS_AS(handle.wait(), DeadlineExceeded);
    }
  }
  CHECK(outcomes[RequestStatus::failed] > 0);  // some deadlines expired
}

TEST_CASE("the queue bound rejects with a clear error and admits again once drained", "[serve][engine]") {
  TempDir dir;
  auto pipeline = tiny_pipeline(dir);
  Engine engine({engine_device(pipeline)}, options_for("cb", 2, 3));
  engine.pause();
  std::vector<EditHandle> accepted;
  for (int i = 0; i < 3; ++i)
    accepted.push_back(engine.submit(request_for(gradient_image(32, 32), box_mask(32, 32, 4, 4, 8), i, 2)));
  EditHandle rejected = engine.submit(request_for(gradient_image(32, 32), box_mask(32, 32, 4, 4, 8), 9, 2));
  CHECK(rejected.status() == RequestStatus::rejected);
  CHECK_THROWS_WITH(rejected.wait(), Catch::Contains("queue full") && Catch::Contains("max_queued 3"));
  engine.resume();
  for (EditHandle& handle : accepted) CHECK(handle.wait().image.width == 32);
  CHECK(engine.submit(request_for(gradient_image(32, 32), box_mask(32, 32, 4, 4, 8), 10, 2)).wait().image.width == 32);
}

TEST_CASE("a request joining a running batch gets the image it gets alone", "[serve][engine]") {
  TempDir dir;
  auto pipeline = tiny_pipeline(dir);
  const EditRequest long_request = request_for(gradient_image(48, 32), box_mask(48, 32, 8, 8, 16), 1, 8);
  const EditRequest joining = request_for(gradient_image(32, 48), box_mask(32, 48, 4, 20, 12), 2, 3);
  const Image alone = pipeline->edit(joining).image;
  Engine engine({engine_device(pipeline)}, options_for("cb", 4));
  std::promise<void> third_step;
  std::atomic<bool> signalled{false};
  SubmitOptions watch;
  watch.on_event = [&](const ServeEvent& event) {
    if (event.status == RequestStatus::running && event.step == 3 && !signalled.exchange(true)) third_step.set_value();
  };
  EditHandle first = engine.submit(long_request, watch);
  third_step.get_future().wait();
  EditHandle second = engine.submit(joining);
  const EditResult joined = second.wait();
  CHECK(first.wait().stats.steps_run == 8);
  CHECK(max_pixel_difference(joined.image, alone) <= 1);
  CHECK(engine.counters().max_assembly_seconds > 0);
}

TEST_CASE("the simulator and a real CPU worker finish a small trace in the same order", "[serve][engine][simulator]") {
  TempDir dir;
  auto pipeline = tiny_pipeline(dir);
  const std::vector<int> steps{6, 2, 4, 3, 5, 1};
  EventLog log;
  std::vector<RequestId> ids;
  {
    Engine engine({engine_device(pipeline)}, options_for("cb", 2));
    engine.pause();  // every request is prepared before the first step, as in the simulated trace
    std::vector<EditHandle> handles;
    for (size_t i = 0; i < steps.size(); ++i) {
      SubmitOptions submit;
      submit.on_event = log.callback();
      handles.push_back(engine.submit(request_for(gradient_image(32, 32), box_mask(32, 32, 2 * i, 4, 10), i, steps[i]), submit));
      ids.push_back(handles.back().id());
    }
    for (EditHandle& handle : handles)
      while (handle.status() != RequestStatus::ready) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    engine.resume();
    engine.wait_idle();
  }
  std::vector<size_t> real_order;
  for (RequestId id : log.denoised_order) real_order.push_back(std::find(ids.begin(), ids.end(), id) - ids.begin());

  SimulationOptions simulation;
  simulation.devices = 1;
  simulation.batching = batching_config("cb", 2);
  simulation.profile = estimated_device_profile(*pipeline);
  simulation.profile.preprocess_seconds = 0;
  simulation.profile.postprocess_seconds = 0;
  std::vector<TraceRequest> trace;
  for (int count : steps) {
    TraceRequest request;
    request.work = pipeline->estimate_work(request_for(gradient_image(32, 32), box_mask(32, 32, 0, 4, 10), 0, count));
    trace.push_back(request);
  }
  CHECK(real_order == simulate(simulation, trace).completion_order);
  CHECK(real_order == std::vector<size_t>{1, 0, 2, 3, 5, 4});
}

TEST_CASE("cancel, deadlines and bad inputs resolve their own request only", "[serve][engine]") {
  TempDir dir;
  auto pipeline = tiny_pipeline(dir);
  Engine engine({engine_device(pipeline)}, options_for("cb", 4));
  std::promise<void> started;
  std::atomic<bool> signalled{false};
  SubmitOptions watch;
  watch.on_event = [&](const ServeEvent& event) {
    if (event.status == RequestStatus::running && !signalled.exchange(true)) started.set_value();
  };
  EditHandle cancelled = engine.submit(request_for(gradient_image(32, 32), box_mask(32, 32, 4, 4, 8), 1, 200), watch);
  EditHandle kept = engine.submit(request_for(gradient_image(32, 32), box_mask(32, 32, 4, 4, 8), 2, 3));
  EditRequest broken = request_for(gradient_image(32, 32), box_mask(32, 32, 4, 4, 8), 3, 3);
  broken.steps = -1;  // 0 asks for the model's recommended steps
  EditHandle invalid = engine.submit(broken);
  SubmitOptions hurry;
  hurry.deadline_seconds = 1e-6;
  EditHandle late = engine.submit(request_for(gradient_image(32, 32), box_mask(32, 32, 4, 4, 8), 4, 3), hurry);
  started.get_future().wait();
  cancelled.cancel();
  CHECK_THROWS_AS(cancelled.wait(), Cancelled);
  CHECK(cancelled.status() == RequestStatus::cancelled);
  CHECK_THROWS_WITH(invalid.wait(), Catch::Contains("steps is -1; it must be 1 to 1000"));
  CHECK(invalid.status() == RequestStatus::failed);
  CHECK_THROWS_AS(late.wait(), DeadlineExceeded);
  CHECK(kept.wait().stats.steps_run == 3);
  CHECK(kept.queueing_seconds() >= 0);
  CHECK(kept.latency_seconds() >= kept.queueing_seconds());
}

TEST_CASE("inline and static engines serve the same images as continuous batching", "[serve][engine]") {
  TempDir dir;
  auto pipeline = tiny_pipeline(dir);
  std::vector<EditRequest> requests;
  for (int i = 0; i < 5; ++i) requests.push_back(request_for(gradient_image(32, 32), box_mask(32, 32, i * 3, 4, 10), i, 2 + i % 2));
  std::vector<Image> expected;
  for (const EditRequest& request : requests) expected.push_back(pipeline->edit(request).image);
  for (const char* batching : {"static-full", "static", "naive-cb", "cb"}) {
    Engine engine({engine_device(pipeline)}, options_for(batching, 3));
    std::vector<EditHandle> handles;
    for (const EditRequest& request : requests) handles.push_back(engine.submit(request));
    for (size_t i = 0; i < handles.size(); ++i) {
      INFO(batching << " request " << i);
      CHECK(max_pixel_difference(handles[i].wait().image, expected[i]) <= 1);
    }
  }
}

TEST_CASE("progress events carry previews when asked, decoded off the step loop", "[serve][engine]") {
  TempDir dir;
  auto pipeline = tiny_pipeline(dir);
  for (const char* batching : {"cb", "naive-cb"}) {
    Engine engine({engine_device(pipeline)}, options_for(batching, 4));
    std::mutex mutex;
    std::vector<int> preview_steps;
    std::vector<RequestStatus> statuses;
    SubmitOptions submit;
    submit.preview_every_steps = 2;
    submit.on_event = [&](const ServeEvent& event) {
      std::lock_guard<std::mutex> lock(mutex);
      statuses.push_back(event.status);
      if (event.preview) {
        CHECK(event.preview->width == 32);
        CHECK(event.preview->height == 48);
        preview_steps.push_back(event.step);
      }
    };
    engine.submit(request_for(gradient_image(32, 48), box_mask(32, 48, 4, 4, 8), 1, 5), submit).wait();
    engine.wait_idle();
    std::lock_guard<std::mutex> lock(mutex);
    INFO(batching);
    CHECK(preview_steps == std::vector<int>{2, 4});
    CHECK(statuses.front() == RequestStatus::queued);
    CHECK(statuses.back() == RequestStatus::done);
  }
}

TEST_CASE("destroying an engine resolves every request it holds", "[serve][engine]") {
  TempDir dir;
  auto pipeline = tiny_pipeline(dir);
  for (const char* batching : {"cb", "naive-cb", "static"}) {
    std::vector<EditHandle> handles;
    {
      Engine engine({engine_device(pipeline)}, options_for(batching, 3));
      for (int i = 0; i < 12; ++i)
        handles.push_back(engine.submit(request_for(gradient_image(32, 32), box_mask(32, 32, i, 4, 10), i, 3)));
      std::this_thread::sleep_for(std::chrono::milliseconds(20 * (1 + handles.size() % 3)));
    }
    INFO(batching);
    for (EditHandle& handle : handles) {
      REQUIRE(handle.wait_for(0));
      CHECK((handle.status() == RequestStatus::done || handle.status() == RequestStatus::cancelled));
    }
  }
}

TEST_CASE("the engine records every batched step when asked: batch work, seconds, workers mid-step beside it",
          "[serve][engine]") {
  TempDir dir;
  auto first = tiny_pipeline(dir);
  auto second = std::shared_ptr<FluxInpaintPipeline>(FluxInpaintPipeline::load(tiny_model(dir), at::kFloat));
  std::mt19937 rng(3);
  const auto run = [&](bool record) {
    EngineOptions options = options_for("cb", 4);
    options.policy = BalancePolicy::request_count;  // both workers get work
    options.record_steps = record;
    Engine engine({engine_device(first), engine_device(second)}, options);
    for (int i = 0; i < 6; ++i)
      engine.submit(request_for(gradient_image(32, 32), box_mask(32, 32, 4, 4, 12), i, 3));
    engine.wait_idle();
    return std::make_pair(engine.step_log(), engine.counters().steps);
  };
  const auto [log, steps] = run(true);
  REQUIRE(steps > 0);
  CHECK(int64_t(log.size()) == steps);
  int requests_stepped = 0;
  bool saw_each_worker[2] = {false, false};
  for (const StepRecord& step : log) {
    CHECK(step.seconds > 0);
    REQUIRE(!step.batch.empty());
    CHECK(step.batch[0].image_tokens > 0);
    CHECK(step.others_stepping >= 0);
    CHECK(step.others_stepping <= 1);
    REQUIRE(step.worker < 2);
    saw_each_worker[step.worker] = true;
    requests_stepped += int(step.batch.size());
  }
  CHECK(requests_stepped == 6 * 3);  // every request's every step, once
  CHECK(saw_each_worker[0]);
  CHECK(saw_each_worker[1]);
  CHECK(run(false).first.empty());
}

TEST_CASE("request_as_run gives what the engine steps: the whole template image replayed, the mask's window in full",
          "[serve][engine]") {
  TempDir dir;
  auto pipeline = tiny_pipeline(dir);
  // A small mask in a larger template: the template is captured whole, so a replay steps the
  // whole image, while a full edit (no mask-aware batching) steps the mask's window.
  EditRequest request = request_for(gradient_image(160, 96), box_mask(160, 96, 8, 8, 16), 1, 2);
  request.context_size = 64;  // the image exceeds it: windows apply
  EditRequest whole_template = request;
  whole_template.mask = Image();  // captured whole, as templates are registered
  pipeline->register_template(whole_template);
  std::map<std::string, int64_t> tokens_of;
  for (const char* batching : {"cb", "static-full"}) {
    EngineOptions options = options_for(batching, 4);
    options.record_steps = true;
    Engine engine({engine_device(pipeline)}, options);
    engine.submit(request).wait();
    const std::vector<StepRecord> log = engine.step_log();
    INFO(batching);
    REQUIRE(log.size() == 2);
    const RequestWork as_run = pipeline->start_edit(request_as_run(request, options.batching))->work();
    for (const StepRecord& step : log) {
      REQUIRE(step.batch.size() == 1);
      CHECK(step.batch[0].image_tokens == as_run.image_tokens);
      CHECK(step.batch[0].masked_tokens == as_run.masked_tokens);
      CHECK(step.batch[0].cached == as_run.cached);
    }
    tokens_of[batching] = as_run.image_tokens;
  }
  CHECK(tokens_of["cb"] != tokens_of["static-full"]);  // else this test could not tell them apart
}

TEST_CASE("an engine with batch size 0 steps one request at a time where the device profile measured no gain",
          "[serve][engine][batch_size]") {
  TempDir dir;
  auto pipeline = tiny_pipeline(dir);
  // This device's profile, with measured steps whose batches cost each request what a single
  // step does (as this project's CPU measured).
  DeviceProfile profile = estimated_device_profile(*pipeline);
  for (int batch_size : {1, 2, 4})
    for (double ratio : {0.1, 0.3, 0.6}) {
      RequestWork work;
      work.steps = 3;
      work.image_tokens = profile.image_tokens;
      work.text_tokens = profile.text_tokens;
      work.masked_tokens = std::max<int64_t>(1, int64_t(ratio * double(profile.image_tokens)));
      work.cached = true;
      MeasuredStep step;
      step.batch.assign(batch_size, work);
      step.flops = estimate_step(profile, step.batch).flops;
      step.seconds = {batch_size * 0.01 + step.flops / 1e11};
      step.cached_blocks = int(profile.blocks.size());
      profile.measured_steps.push_back(step);
    }
  const std::string profile_path = dir.file("cpu-profile.json");
  write_device_profile(profile, profile_path);
  const auto largest_batch = [&](int max_batch) {
    EngineOptions options = options_for("cb", max_batch);
    options.record_steps = true;
    Engine engine({engine_device(pipeline, profile_path)}, options);
    std::vector<EditHandle> handles;
    engine.pause();  // every request prepared and waiting before the first step
    for (int i = 0; i < 4; ++i)
      handles.push_back(engine.submit(request_for(gradient_image(32, 32), box_mask(32, 32, 4, 4, 12), i, 3)));
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (engine.counters().prepared < 4 && std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    engine.resume();
    for (EditHandle& handle : handles) {
      handle.wait();
      CHECK(handle.status() == RequestStatus::done);
    }
    size_t largest = 0;
    for (const StepRecord& step : engine.step_log()) largest = std::max(largest, step.batch.size());
    return largest;
  };
  CHECK(largest_batch(0) == 1);
  CHECK(largest_batch(4) > 1);  // given, it is kept
}
