// The simulator's ground truths: what a simulated step takes, apart from the balancer's model.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <functional>

#include "core/diagnostics/error.h"
#include "serve_tools/simulator.h"
#include "serve_tools/step_ground_truth.h"
#include "support/temp_dir.h"

using namespace flashps::serve;

namespace {

RequestWork request(double ratio, bool cached = true) {
  const DeviceProfile profile = h800_flux_profile();
  RequestWork work;
  work.steps = 1;
  work.image_tokens = profile.image_tokens;
  work.text_tokens = profile.text_tokens;
  work.masked_tokens = static_cast<int64_t>(ratio * profile.image_tokens);
  work.cached = cached;
  return work;
}

// Steps whose true time is NOT linear in FLOPs (a square root), recorded with two repeats each.
DeviceProfile profile_with_measured_steps(double spread) {
  DeviceProfile profile = h800_flux_profile();
  for (int size : {1, 2, 4})
    for (double ratio : {0.05, 0.2, 0.5, 1.0}) {
      MeasuredStep step;
      step.batch.assign(size, request(ratio, ratio < 1.0));
      step.flops = estimate_step(profile, step.batch).flops;
      const double seconds = 1e-3 * std::sqrt(step.flops / 1e9);
      step.seconds = {seconds * (1 - spread), seconds * (1 + spread)};
      profile.measured_steps.push_back(step);
    }
  return profile;
}

// Simulated devices with the H800-class profile and no pre-/post-processing: latency is steps.
SimulationOptions steps_only(int devices) {
  SimulationOptions options;
  options.devices = devices;
  options.profile = h800_flux_profile();
  options.profile.preprocess_seconds = options.profile.postprocess_seconds = 0;
  return options;
}

}  // namespace

TEST_CASE("ground truth: exact is the model; noise has mean 1 and the asked spread; seeds repeat", "[serve][simulator]") {
  const DeviceProfile profile = h800_flux_profile();
  const std::vector<RequestWork> batch{request(0.2), request(0.6)};
  const double model = estimate_step(profile, batch).seconds;
  StepGroundTruth exact(profile, {});
  CHECK(exact.step_seconds(batch) == model);
  GroundTruthOptions noisy;
  noisy.kind = GroundTruthKind::noisy;
  noisy.noise_cv = 0.1;
  StepGroundTruth first(profile, noisy), second(profile, noisy);
  double sum = 0, squares = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const double ratio = first.step_seconds(batch) / model;
    CHECK(ratio == second.step_seconds(batch) / model);  // the same seed, the same draws
    sum += ratio;
    squares += ratio * ratio;
  }
  const double mean = sum / n, cv = std::sqrt(squares / n - mean * mean) / mean;
  CHECK(mean == Approx(1.0).epsilon(0.01));
  CHECK(cv == Approx(0.1).epsilon(0.05));
  CHECK(GroundTruthOptions{GroundTruthKind::noisy, 0.1, -0.2, true, 1}.label() == "noisy+skew-0.20");
  CHECK_THROWS_WITH(ground_truth_kind_from_name("perfect"), Catch::Contains("perfect"));
}

TEST_CASE("ground truth: a skewed model error mis-estimates large and small work in opposite directions",
          "[serve][simulator]") {
  const DeviceProfile profile = h800_flux_profile();
  RequestWork thumbnail = request(1.0, false);  // 16 tokens, no text: the fixed per-block cost dominates
  thumbnail.image_tokens = 16;
  thumbnail.masked_tokens = 16;
  thumbnail.text_tokens = 0;
  const std::vector<RequestWork> small{thumbnail};
  std::vector<RequestWork> large;
  for (int i = 0; i < 8; ++i) large.push_back(request(0.9, false));
  GroundTruthOptions skew;
  skew.model_error = 0.2;
  StepGroundTruth skewed(profile, skew);
  const double small_ratio = skewed.step_seconds(small) / estimate_step(profile, small).seconds;
  const double large_ratio = skewed.step_seconds(large) / estimate_step(profile, large).seconds;
  CHECK(large_ratio > 1.1);   // FLOP-bound: mostly the per-FLOP cost, 1.2x
  CHECK(small_ratio < 0.9);   // fixed-cost-bound: mostly the fixed cost, 0.8x
  GroundTruthOptions scale = skew;
  scale.error_skews = false;
  StepGroundTruth scaled(profile, scale);
  CHECK(scaled.step_seconds(small) / estimate_step(profile, small).seconds == Approx(1.2));
  CHECK(scaled.step_seconds(large) / estimate_step(profile, large).seconds == Approx(1.2));
  skew.model_error = -0.95;
  CHECK_THROWS_WITH(StepGroundTruth(profile, skew), Catch::Contains("model error"));
}

TEST_CASE("ground truth: measured replays recorded steps, interpolated, with their recorded spread",
          "[serve][simulator]") {
  GroundTruthOptions measured;
  measured.kind = GroundTruthKind::measured;
  CHECK_THROWS_WITH(StepGroundTruth(h800_flux_profile(), measured), Catch::Contains("measured steps"));

  const DeviceProfile exact_steps = profile_with_measured_steps(0.0);
  StepGroundTruth replay(exact_steps, measured);
  for (const MeasuredStep& step : exact_steps.measured_steps)  // a recorded batch: its recorded time
    CHECK(replay.step_seconds(step.batch) == Approx(step.seconds[0]).epsilon(1e-9));
  // Between two recorded batches (same size and path): on the segment joining them, which lies
  // under the concave truth and differs from the balancer's linear model.
  const std::vector<RequestWork> between{request(0.35)};
  const double low = 1e-3 * std::sqrt(estimate_step(exact_steps, {request(0.2)}).flops / 1e9);
  const double high = 1e-3 * std::sqrt(estimate_step(exact_steps, {request(0.5)}).flops / 1e9);
  const double replayed = replay.step_seconds(between);
  CHECK(replayed > low);
  CHECK(replayed < high);
  CHECK(replayed < 1e-3 * std::sqrt(estimate_step(exact_steps, between).flops / 1e9));
  CHECK(std::abs(replayed / estimate_step(exact_steps, between).seconds - 1) > 0.05);
  // A batch of 8 (none recorded): the batches of 4, extended along their last segment.
  std::vector<RequestWork> eight(8, request(0.2));
  CHECK(replay.step_seconds(eight) > replay.step_seconds(std::vector<RequestWork>(4, request(0.2))));

  // Spread: every draw is one of the recorded deviations (here -10% or +10% of the median).
  StepGroundTruth spread(profile_with_measured_steps(0.1), measured);
  const std::vector<RequestWork>& recorded = exact_steps.measured_steps[1].batch;
  bool saw_low = false, saw_high = false;
  for (int i = 0; i < 200; ++i) {
    const double ratio = spread.step_seconds(recorded) / exact_steps.measured_steps[1].seconds[0];
    saw_low |= ratio == Approx(0.9);
    saw_high |= ratio == Approx(1.1);
    CHECK((ratio == Approx(0.9) || ratio == Approx(1.1)));
  }
  CHECK(saw_low);
  CHECK(saw_high);
}

TEST_CASE("measured steps round-trip through the profile file; bad ones are refused by name", "[serve][profile]") {
  flashps::test::TempDir dir;
  const DeviceProfile profile = profile_with_measured_steps(0.05);
  write_device_profile(profile, dir.file("p.json"));
  const DeviceProfile read = read_device_profile(dir.file("p.json"));
  REQUIRE(read.measured_steps.size() == profile.measured_steps.size());
  for (size_t i = 0; i < read.measured_steps.size(); ++i) {
    CHECK(read.measured_steps[i].seconds == profile.measured_steps[i].seconds);
    CHECK(read.measured_steps[i].flops == profile.measured_steps[i].flops);
    CHECK(read.measured_steps[i].batch.size() == profile.measured_steps[i].batch.size());
    CHECK(read.measured_steps[i].batch[0].masked_tokens == profile.measured_steps[i].batch[0].masked_tokens);
    CHECK(read.measured_steps[i].batch[0].cached == profile.measured_steps[i].batch[0].cached);
  }
  std::string text;
  {
    std::ifstream in(dir.file("p.json"));
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const size_t seconds = text.find("\"seconds\"");
  REQUIRE(seconds != std::string::npos);
  const size_t number = text.find_first_of("0123456789", seconds);
  text.insert(number, "-");
  std::ofstream(dir.file("negative.json")) << text;
  CHECK_THROWS_WITH(read_device_profile(dir.file("negative.json")),
                    Catch::Contains("negative.json") && Catch::Contains("not positive"));
}

TEST_CASE("the simulator's clock follows the ground truth, not the balancer's model", "[serve][simulator]") {
  TraceRequest one;
  one.work = request(0.2);
  one.work.steps = 10;
  SimulationOptions options = steps_only(2);
  const double exact = simulate(options, {one}).makespan;
  options.ground_truth.model_error = 0.5;
  options.ground_truth.error_skews = false;
  CHECK(simulate(options, {one}).makespan == Approx(1.5 * exact));
}

TEST_CASE("the simulator routes with a request's estimate and steps it as prepared", "[serve][simulator]") {
  TraceRequest small;
  small.work = request(0.1);
  small.work.steps = 10;
  TraceRequest overestimated = small;
  overestimated.work.masked_tokens = overestimated.work.image_tokens;  // routing thinks it is all masked
  overestimated.exact_work = small.work;
  const SimulationOptions options = steps_only(1);
  CHECK(simulate(options, {overestimated}).makespan == Approx(simulate(options, {small}).makespan));
  TraceRequest large = small;
  large.work.masked_tokens = large.work.image_tokens;
  CHECK(simulate(options, {large}).makespan > 1.5 * simulate(options, {small}).makespan);
}

namespace {

// profile_with_measured_steps, each step also timed `slowdown(i)` times slower beside co-runners.
DeviceProfile profile_with_co_run_steps(int co_runners, const std::function<double(size_t)>& slowdown) {
  DeviceProfile profile = profile_with_measured_steps(0.0);
  profile.co_runners = co_runners;
  for (size_t i = 0; i < profile.measured_steps.size(); ++i) {
    MeasuredStep& step = profile.measured_steps[i];
    for (double seconds : step.seconds) step.co_run_seconds.push_back(seconds * slowdown(i));
  }
  return profile;
}

}  // namespace

TEST_CASE("ground truth: on a shared host a measured step takes its recorded co-run slowdown beside busy neighbours",
          "[serve][simulator]") {
  GroundTruthOptions shared;
  shared.kind = GroundTruthKind::measured;
  shared.shared_host = true;
  CHECK(shared.label() == "measured+co-run");
  const DeviceProfile one_beside = profile_with_co_run_steps(1, [](size_t) { return 1.5; });
  StepGroundTruth truth(one_beside, shared);
  CHECK(truth.models_co_running());
  for (const MeasuredStep& step : one_beside.measured_steps) {
    CHECK(co_run_slowdown(step) == Approx(1.5));
    CHECK(truth.step_seconds(step.batch, 0) == Approx(step.seconds[0]).epsilon(1e-9));
    CHECK(truth.step_seconds(step.batch, 1) == Approx(1.5 * step.seconds[0]).epsilon(1e-9));
    CHECK(truth.step_seconds(step.batch, 3) == Approx(1.5 * step.seconds[0]).epsilon(1e-9));  // as measured, at most
  }
  // Two co-runners measured, one busy: half the slowdown.
  StepGroundTruth two_measured(profile_with_co_run_steps(2, [](size_t) { return 1.5; }), shared);
  const MeasuredStep& recorded = one_beside.measured_steps[1];
  CHECK(two_measured.step_seconds(recorded.batch, 1) == Approx(1.25 * recorded.seconds[0]).epsilon(1e-9));
  // Devices of separate hosts, or a truth that is not the measured one: no slowdown.
  GroundTruthOptions separate = shared;
  separate.shared_host = false;
  StepGroundTruth apart(one_beside, separate);
  CHECK_FALSE(apart.models_co_running());
  CHECK(apart.step_seconds(recorded.batch, 1) == Approx(recorded.seconds[0]).epsilon(1e-9));
  GroundTruthOptions exact;
  exact.shared_host = true;
  StepGroundTruth model(one_beside, exact);
  CHECK(model.step_seconds(recorded.batch, 1) == estimate_step(one_beside, recorded.batch).seconds);
  // Between two recorded batches the slowdown lies between theirs (steps 1 and 2: m = 0.2, 0.5).
  StepGroundTruth varying(profile_with_co_run_steps(1, [](size_t i) { return i == 1 ? 1.2 : 1.6; }), shared);
  const std::vector<RequestWork> between{request(0.35)};
  const double slowdown = varying.step_seconds(between, 1) / varying.step_seconds(between, 0);
  CHECK(slowdown > 1.2);
  CHECK(slowdown < 1.6);
}

TEST_CASE("co-run timings round-trip through the profile file; without their co-runner count they are refused",
          "[serve][profile]") {
  flashps::test::TempDir dir;
  const DeviceProfile profile = profile_with_co_run_steps(2, [](size_t i) { return 1.1 + 0.01 * double(i); });
  write_device_profile(profile, dir.file("p.json"));
  const DeviceProfile read = read_device_profile(dir.file("p.json"));
  CHECK(read.co_runners == 2);
  REQUIRE(read.measured_steps.size() == profile.measured_steps.size());
  for (size_t i = 0; i < read.measured_steps.size(); ++i)
    CHECK(read.measured_steps[i].co_run_seconds == profile.measured_steps[i].co_run_seconds);
  std::string text;
  {
    std::ifstream in(dir.file("p.json"));
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const size_t count = text.find("\"co_runners\"");
  REQUIRE(count != std::string::npos);
  text.replace(count, std::string("\"co_runners\"").size(), "\"renamed\"");
  std::ofstream(dir.file("no_count.json")) << text;
  CHECK_THROWS_WITH(read_device_profile(dir.file("no_count.json")),
                    Catch::Contains("no_count.json") && Catch::Contains("co_runners"));
}

TEST_CASE("simulated devices of one host slow each other's steps by the measured co-run slowdown",
          "[serve][simulator]") {
  DeviceProfile profile = profile_with_co_run_steps(1, [](size_t) { return 2.0; });
  profile.preprocess_seconds = profile.postprocess_seconds = 0;
  TraceRequest one;
  one.work = profile.measured_steps[1].batch[0];  // a recorded batch of one: replayed exactly
  one.work.steps = 10;
  SimulationOptions options;
  options.devices = 2;
  options.profile = profile;
  options.policy = BalancePolicy::request_count;
  options.ground_truth.kind = GroundTruthKind::measured;
  options.ground_truth.shared_host = true;
  const double alone = simulate(options, {one}).makespan;
  CHECK(alone == Approx(10 * profile.measured_steps[1].seconds[0]).epsilon(1e-6));
  // Two at once, one per device: every step but the first one's first runs beside the other's.
  const SimulationResult both = simulate(options, {one, one});
  CHECK(both.outcomes[0].worker != both.outcomes[1].worker);
  CHECK(both.makespan > 1.85 * alone);
  CHECK(both.makespan <= 2.0 * alone * (1 + 1e-9));
  options.ground_truth.shared_host = false;  // separate hosts: each as fast as alone
  CHECK(simulate(options, {one, one}).makespan == Approx(alone).epsilon(1e-6));
}
