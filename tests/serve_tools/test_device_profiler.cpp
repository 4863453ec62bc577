// `flashps profile` on real (tiny) pipelines of each family: what it records, with and without
// co-runners.
#include <algorithm>
#include <catch2/catch.hpp>

#include "pipeline/family_registry.h"
#include "pipeline/flux/flux_inpaint_pipeline.h"
#include "serve_tools/device_profiler.h"
#include "support/fixtures.h"
#include "support/tiny_pipeline.h"
#include "support/tiny_sd_folder.h"

using namespace flashps;
using namespace flashps::serve;
using namespace flashps::test;

TEST_CASE("the device profiler records every step, and each again beside its co-runners when given some",
          "[serve][profile]") {
  TempDir dir;
  const std::string model = tiny_model(dir);
  auto timed = FluxInpaintPipeline::load(model, at::kFloat);
  ProfileOptions options;
  options.sizes = {32, 64};
  options.batch_sizes = {1, 2};
  options.mask_ratios = {0.4};
  options.repeats = 2;

  const ProfileReport alone = profile_device(*timed, options);
  CHECK(alone.profile.co_runners == 0);
  CHECK(alone.profile.preprocess_seconds > 0);  // at the largest size (64), the simulated requests'
  CHECK(alone.profile.postprocess_seconds > 0);
  REQUIRE(alone.profile.measured_steps.size() == 2 * 2 * 2);  // sizes x batch sizes x (full + one ratio)
  for (const MeasuredStep& step : alone.profile.measured_steps) {
    CHECK(step.seconds.size() == 2);
    CHECK(step.co_run_seconds.empty());
  }

  auto beside = FluxInpaintPipeline::load(model, at::kFloat);
  options.co_runners = {beside.get()};
  const ProfileReport shared = profile_device(*timed, options);
  CHECK(shared.profile.co_runners == 1);
  REQUIRE(shared.profile.measured_steps.size() == alone.profile.measured_steps.size());
  for (const MeasuredStep& step : shared.profile.measured_steps) {
    REQUIRE(step.co_run_seconds.size() == 2);
    for (double seconds : step.co_run_seconds) CHECK(seconds > 0);
    CHECK(co_run_slowdown(step) > 0);
  }
  // The kv replays ran beside co-runners too (their co-runners replay the template they registered).
  CHECK(std::any_of(shared.profile.measured_steps.begin(), shared.profile.measured_steps.end(),
                    [](const MeasuredStep& step) { return step.batch[0].cached; }));
}

TEST_CASE("the device profiler measures a Stable Diffusion model with its own replay kind (hidden)",
          "[serve][profile]") {
  const auto fixtures = fixtures_root();
  if (!fixtures) {
    WARN("fixtures not found (../shared/fixtures or FLASHPS_FIXTURES_DIR): skipped");
    return;
  }
  TempDir dir;
  const std::shared_ptr<InpaintModel> model = load_model(tiny_sd_folder(*fixtures, dir, 9));
  auto timed = model->new_pipeline(nullptr);
  auto beside = model->new_pipeline(nullptr);  // shares the weights, as an engine's CPU workers do
  ProfileOptions options;
  options.sizes = {32, 64};
  options.batch_sizes = {1, 2};
  options.mask_ratios = {0.4};
  options.repeats = 1;
  options.co_runners = {beside.get()};
  const ProfileReport report = profile_device(*timed, options);
  CHECK(report.profile.cache_mode == CacheMode::hidden);
  REQUIRE(report.profile.measured_steps.size() == 2 * 2 * 2);
  CHECK(std::any_of(report.profile.measured_steps.begin(), report.profile.measured_steps.end(),
                    [](const MeasuredStep& step) { return step.batch[0].cached; }));
  CHECK(report.load_samples.size() == 2 * 3);  // three partial reads of each size's first entry
  CHECK(report.profile.image_tokens > 0);
}
