// The planner's online speed estimate, and how a pipeline gets its speeds: a profile file when
// one is found, else what its own steps measure.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>

#include "engine/speed_estimator.h"
#include "pipeline/flux/flux_inpaint_pipeline.h"
#include "serve/device_profile.h"
#include "serve/engine_device.h"
#include "support/temp_dir.h"
#include "support/tiny_pipeline.h"

using namespace flashps;
using namespace flashps::engine;

namespace {

// Sets an environment variable for one scope.
struct ScopedVariable {
  std::string name;
  std::optional<std::string> saved;
  ScopedVariable(std::string variable, const char* value) : name(std::move(variable)) {
    if (const char* old = std::getenv(name.c_str())) saved = old;
    if (value) setenv(name.c_str(), value, 1);
    else unsetenv(name.c_str());
  }
  ~ScopedVariable() {
    if (saved) setenv(name.c_str(), saved->c_str(), 1);
    else unsetenv(name.c_str());
  }
};

}  // namespace

TEST_CASE("speed estimate: fits fixed + FLOPs / speed from steps, follows a change, keeps the prior until sizes differ",
          "[planner]") {
  SpeedEstimator estimator;
  const DeviceSpeed prior = estimator.speed();
  CHECK(estimator.compute_observations() == 0);
  // One size only: the rate moves so that the prior's fixed cost plus FLOPs / rate fit it.
  estimator.observe_compute(12 * 1e9, 12, 12 * (prior.fixed_seconds_per_block + 0.01));
  CHECK(estimator.speed().flops_per_second == Approx(1e11));
  CHECK(estimator.speed().fixed_seconds_per_block == prior.fixed_seconds_per_block);

  // Steps of a device with 2 ms per block + 50 GFLOP/s, at several sizes: both recovered.
  SpeedEstimator device;
  for (int round = 0; round < 3; ++round)
    for (double gflops : {0.1, 0.5, 2.0, 8.0}) device.observe_compute(10 * gflops * 1e9, 10, 10 * (2e-3 + gflops / 50));
  CHECK(device.speed().flops_per_second == Approx(50e9).epsilon(1e-6));
  CHECK(device.speed().fixed_seconds_per_block == Approx(2e-3).epsilon(1e-6));
  // The device gets twice as fast: recent steps weigh more, so the estimate follows.
  for (int round = 0; round < 10; ++round)
    for (double gflops : {0.1, 0.5, 2.0, 8.0}) device.observe_compute(10 * gflops * 1e9, 10, 10 * (1e-3 + gflops / 100));
  CHECK(device.speed().flops_per_second == Approx(100e9).epsilon(0.02));
  CHECK(device.speed().fixed_seconds_per_block == Approx(1e-3).epsilon(0.05));

  // Loads: bytes per read against seconds per read.
  for (double megabytes : {1.0, 4.0, 16.0}) device.observe_load(megabytes * 1e6 * 8, 8, 8 * (1e-5 + megabytes * 1e6 / 5e9));
  CHECK(device.speed().load_bytes_per_second == Approx(5e9).epsilon(1e-6));
  CHECK(device.speed().fixed_seconds_per_load == Approx(1e-5).epsilon(1e-4));
  // Nonsense is ignored, not learned.
  const DeviceSpeed before = device.speed();
  device.observe_compute(-1, 10, 1);
  device.observe_compute(1e9, 0, 1);
  device.observe_load(1e6, 1, std::nan(""));
  CHECK(device.speed().flops_per_second == before.flops_per_second);
  CHECK(device.speed().load_bytes_per_second == before.load_bytes_per_second);
  CHECK_THROWS(SpeedEstimator({}, 0.0));
}

TEST_CASE("speed estimate: a uniform drift of the machine shows in the next prediction, at every size", "[planner]") {
  const auto seconds_per_block = [](const DeviceSpeed& speed, double gflops) {
    return speed.fixed_seconds_per_block + gflops * 1e9 / speed.flops_per_second;
  };
  const auto truth = [](double gflops, double factor) { return factor * (2e-3 + gflops / 50); };
  SpeedEstimator with_drift, without_drift({}, 0.9, 0.0);
  for (SpeedEstimator* estimator : {&with_drift, &without_drift})
    for (int round = 0; round < 3; ++round)
      for (double gflops : {0.1, 0.5, 2.0, 8.0}) estimator->observe_compute(10 * gflops * 1e9, 10, 10 * truth(gflops, 1.0));
  CHECK(with_drift.drift() == Approx(1.0).epsilon(1e-6));
  // The machine gets 25% slower; one small step shows it. A large step is predicted next.
  for (SpeedEstimator* estimator : {&with_drift, &without_drift})
    estimator->observe_compute(10 * 0.5e9, 10, 10 * truth(0.5, 1.25));
  const double before = truth(8.0, 1.0), after = truth(8.0, 1.25);
  CHECK(seconds_per_block(with_drift.speed(), 8.0) > before + 0.4 * (after - before));
  CHECK(seconds_per_block(without_drift.speed(), 8.0) < before + 0.1 * (after - before));
  // Once the slower machine has been seen at every size the estimate settles on it.
  for (int round = 0; round < 10; ++round)
    for (double gflops : {0.1, 0.5, 2.0, 8.0}) with_drift.observe_compute(10 * gflops * 1e9, 10, 10 * truth(gflops, 1.25));
  for (double gflops : {0.1, 0.5, 2.0, 8.0})
    CHECK(seconds_per_block(with_drift.speed(), gflops) == Approx(truth(gflops, 1.25)).epsilon(0.02));
  CHECK_THROWS(SpeedEstimator({}, 0.9, 1.0));
}

TEST_CASE("speed estimate: each kind of step keeps its own fit, and the machine's drift moves them all", "[planner]") {
  const auto seconds_per_block = [](const DeviceSpeed& speed, double gflops) {
    return speed.fixed_seconds_per_block + gflops * 1e9 / speed.flops_per_second;
  };
  // kv replays cost more per block whatever their size (copying every cached key and value) but
  // less per FLOP than hidden ones: no single line times one factor per kind fits both.
  const auto truth = [](double gflops, StepKind kind, double factor) {
    return factor * (kind == StepKind::kv ? 4e-3 + gflops / 60 : 1e-3 + gflops / 40);
  };
  SpeedEstimator estimator;
  for (int round = 0; round < 3; ++round)
    for (double gflops : {0.1, 0.5, 2.0, 8.0})
      estimator.observe_compute(10 * gflops * 1e9, 10, 10 * truth(gflops, StepKind::hidden, 1.0), StepKind::hidden);
  // No kv step seen: kv steps are planned with the fit of all steps.
  CHECK(estimator.speed(StepKind::kv).flops_per_second == estimator.speed().flops_per_second);
  for (int round = 0; round < 6; ++round)
    for (double gflops : {0.1, 0.5, 2.0, 8.0})
      for (StepKind kind : {StepKind::kv, StepKind::hidden})
        estimator.observe_compute(10 * gflops * 1e9, 10, 10 * truth(gflops, kind, 1.0), kind);
  for (double gflops : {0.3, 4.0})
    for (StepKind kind : {StepKind::kv, StepKind::hidden})
      CHECK(seconds_per_block(estimator.speed(kind), gflops) == Approx(truth(gflops, kind, 1.0)).epsilon(0.03));

  // The machine gets 25% slower; one hidden step shows it, and the next large kv step's
  // prediction moves most of the way.
  estimator.observe_compute(10 * 0.5e9, 10, 10 * truth(0.5, StepKind::hidden, 1.25), StepKind::hidden);
  const double before = truth(8.0, StepKind::kv, 1.0), after = truth(8.0, StepKind::kv, 1.25);
  CHECK(seconds_per_block(estimator.speed(StepKind::kv), 8.0) > before + 0.4 * (after - before));

  // Sizes only 10% apart do not make a kind's own fit (noise would set its slope): the fit of
  // all steps stands in.
  SpeedEstimator close_sizes;
  for (double gflops : {0.1, 0.5, 2.0, 8.0})
    close_sizes.observe_compute(10 * gflops * 1e9, 10, 10 * truth(gflops, StepKind::hidden, 1.0), StepKind::hidden);
  close_sizes.observe_compute(10 * 2.0e9, 10, 10 * 0.05, StepKind::kv);
  close_sizes.observe_compute(10 * 2.2e9, 10, 10 * 0.02, StepKind::kv);
  CHECK(close_sizes.speed(StepKind::kv).flops_per_second == close_sizes.speed().flops_per_second);
}

TEST_CASE("a pipeline plans with what its steps measured, or with a profile's speeds when given one", "[planner][pipeline]") {
  test::TempDir dir;
  ScopedVariable no_profile("FLASHPS_PROFILE", "none");
  auto pipeline = FluxInpaintPipeline::load(test::tiny_model(dir), at::kFloat);
  const DeviceSpeed defaults = pipeline->planning_speed();
  EditRequest small;
  small.image = test::gradient_image(32, 32);
  small.mask = test::box_mask(32, 32, 0, 0, 8);
  small.steps = 2;
  EditRequest large = small;
  large.image = test::gradient_image(96, 96);
  large.mask = test::box_mask(96, 96, 0, 0, 8);
  pipeline->run_alone(small);
  pipeline->run_alone(large);
  const DeviceSpeed measured = pipeline->planning_speed();
  CHECK_FALSE(pipeline->speed_from_profile());
  CHECK(measured.flops_per_second != defaults.flops_per_second);  // learned from the four steps
  CHECK(measured.flops_per_second > 0);

  DeviceSpeed profiled;
  profiled.flops_per_second = 1.23e12;
  profiled.fixed_seconds_per_block = 4.5e-4;
  pipeline->use_profile_speed(profiled);
  pipeline->run_alone(small);  // steps no longer move it
  CHECK(pipeline->speed_from_profile());
  CHECK(pipeline->planning_speed().flops_per_second == 1.23e12);
  CHECK(pipeline->cost_profile().speed.fixed_seconds_per_block == 4.5e-4);
}

TEST_CASE("profile lookup: the given file, else $FLASHPS_PROFILE, else the default location; the device takes its speeds",
          "[planner][profile]") {
  test::TempDir dir;
  ScopedVariable cache("XDG_CACHE_HOME", dir.file("cache").c_str());
  ScopedVariable variable("FLASHPS_PROFILE", nullptr);
  CHECK(serve::default_profile_path() == dir.file("cache") + "/flashps/device-profile.json");
  CHECK(serve::resolve_profile_path("") == "");  // nothing there yet
  CHECK(serve::resolve_profile_path("given.json") == "given.json");

  serve::DeviceProfile measured = serve::h800_flux_profile();
  measured.block_compute = {1.0 / 3e11, 7e-4, 0.99, 10};
  std::filesystem::create_directories(dir.file("cache") + "/flashps");
  serve::write_device_profile(measured, serve::default_profile_path());
  CHECK(serve::resolve_profile_path("") == serve::default_profile_path());
  {
    ScopedVariable named("FLASHPS_PROFILE", "elsewhere.json");
    CHECK(serve::resolve_profile_path("") == "elsewhere.json");
  }
  {
    ScopedVariable none("FLASHPS_PROFILE", "none");
    CHECK(serve::resolve_profile_path("") == "");
  }
  const DeviceSpeed speed = serve::device_speed_of(measured);
  CHECK(speed.flops_per_second == Approx(3e11));
  CHECK(speed.fixed_seconds_per_block == Approx(7e-4));

  // A device built without naming a file finds the default one: its routing model has the
  // profile's speeds over this model's blocks, and its planner the same speeds.
  auto pipeline = std::shared_ptr<FluxInpaintPipeline>(FluxInpaintPipeline::load(test::tiny_model(dir), at::kFloat));
  const serve::EngineDevice device = serve::engine_device(pipeline, "");
  CHECK(device.profile.block_compute.slope == measured.block_compute.slope);
  CHECK(device.profile.blocks.size() == pipeline->cost_profile().blocks.size());
  CHECK(device.profile.blocks.size() != measured.blocks.size());
  CHECK(pipeline->speed_from_profile());
  CHECK(pipeline->planning_speed().flops_per_second == Approx(3e11));
  // A damaged profile is an error naming the file, not a silent default.
  std::ofstream(serve::default_profile_path()) << "{ not json";
  CHECK_THROWS_WITH(serve::engine_device(pipeline, ""), Catch::Contains("device-profile.json"));
}
