// The per-device default batch size: chosen from a profile's measured steps, kept when given.
#include <catch2/catch.hpp>

#include "serve/batch_size.h"
#include "serve_tools/simulator.h"

using namespace flashps::serve;

namespace {

RequestWork request_with(const DeviceProfile& profile, double ratio) {
  RequestWork work;
  work.steps = profile.steps;
  work.image_tokens = profile.image_tokens;
  work.text_tokens = profile.text_tokens;
  work.masked_tokens = static_cast<int64_t>(ratio * double(profile.image_tokens));
  work.cached = true;
  return work;
}

// A profile whose measured steps take `seconds(batch size, FLOPs of the batch)`, at batches of
// 1, 2 and 4 and three mask ratios, as `flashps profile` records them.
template <typename Seconds>
DeviceProfile profile_measuring(Seconds seconds) {
  DeviceProfile profile = h800_flux_profile();
  for (int batch_size : {1, 2, 4})
    for (double ratio : {0.1, 0.3, 0.6}) {
      MeasuredStep step;
      step.batch.assign(batch_size, request_with(profile, ratio));
      step.flops = estimate_step(profile, step.batch).flops;
      step.seconds = {seconds(batch_size, step.flops)};
      step.computed_blocks = int(profile.blocks.size());
      profile.measured_steps.push_back(step);
    }
  return profile;
}

// Per request, a batch costs what a single step does (this project's CPU, within 3%).
DeviceProfile cpu_like() {
  return profile_measuring([](int n, double flops) { return n * 0.05 + flops / 1e12; });
}
// A fixed cost per step that a batch shares (a GPU's launches): batching pays.
DeviceProfile gpu_like() {
  return profile_measuring([](int, double flops) { return 0.5 + flops / 1e14; });
}

}  // namespace

TEST_CASE("the default batch size follows the profile's measured batches", "[serve][batch_size]") {
  const BatchSizeChoice cpu = choose_max_batch(cpu_like());
  CHECK(cpu.max_batch == 1);
  CHECK(cpu.batched_over_single == Approx(1.0).margin(0.01));
  CHECK_THAT(cpu.reason, Catch::Contains("saves under 10%"));

  const BatchSizeChoice gpu = choose_max_batch(gpu_like());
  CHECK(gpu.max_batch == kDefaultMaxBatch);
  CHECK(gpu.batched_over_single < 0.9);
  CHECK_THAT(gpu.reason, Catch::Contains("batching pays"));

  // Nothing to compare: the default stands.
  const BatchSizeChoice built_in = choose_max_batch(h800_flux_profile());
  CHECK(built_in.max_batch == kDefaultMaxBatch);
  CHECK(built_in.batched_over_single == 0);
  CHECK_THAT(built_in.reason, Catch::Contains("no batched steps"));
  DeviceProfile singles_only = cpu_like();
  singles_only.measured_steps.resize(3);  // the batch-1 steps
  CHECK(choose_max_batch(singles_only).max_batch == kDefaultMaxBatch);
}

TEST_CASE("a batch size given is kept; 0 is chosen per device", "[serve][batch_size]") {
  CHECK(batching_for_device(batching_config("cb", 4), cpu_like()).max_batch == 4);
  CHECK(batching_for_device(batching_config("cb", 0), cpu_like()).max_batch == 1);
  CHECK(batching_for_device(batching_config("cb", 0), gpu_like()).max_batch == kDefaultMaxBatch);
  CHECK_THROWS(batching_config("cb", -1));
  CHECK_THROWS(WorkerBatcher(batching_config("cb", 0)));  // a worker needs it resolved
}

TEST_CASE("a simulated device with batch size 0 steps as its profile chose", "[serve][batch_size][simulator]") {
  for (const bool cpu : {true, false}) {
    SimulationOptions options;
    options.devices = 1;
    options.batching = batching_config("cb", 0);
    options.profile = cpu ? cpu_like() : gpu_like();
    options.profile.preprocess_seconds = options.profile.postprocess_seconds = 0;
    TraceRequest request;
    request.work = request_with(options.profile, 0.2);
    request.work.steps = 4;
    const SimulationResult result = simulate(options, {request, request});
    if (cpu)  // one at a time: the second starts when the first is done
      CHECK(result.outcomes[1].first_step >= result.outcomes[0].finish - 1e-9);
    else  // together (from the first's second step: the two are prepared one after the other)
      CHECK(result.outcomes[1].first_step < result.outcomes[0].finish / 2);
  }
}
