#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "dev/fixture_runners.h"
#include "schedulers/flow_match_euler_discrete.h"
#include "support/fixtures.h"

namespace {

using Catch::Contains;  // the string matcher (v2 and, through support/catch2_v3, v3)
using flashps::FlowMatchEulerDiscreteConfig;
using flashps::FlowMatchEulerDiscreteScheduler;
namespace fs = std::filesystem;

std::vector<float> to_vector(const at::Tensor& tensor) {
  at::Tensor contiguous = tensor.contiguous();
  return {contiguous.data_ptr<float>(), contiguous.data_ptr<float>() + contiguous.numel()};
}

FlowMatchEulerDiscreteScheduler flux_scheduler() {
  FlowMatchEulerDiscreteConfig config;
  config.use_dynamic_shifting = true;
  config.shift = 3.0;
  return FlowMatchEulerDiscreteScheduler(config);
}

FlowMatchEulerDiscreteScheduler sd3_scheduler() {
  FlowMatchEulerDiscreteConfig config;
  config.shift = 3.0;
  return FlowMatchEulerDiscreteScheduler(config);
}

fs::path write_temporary_json(const nlohmann::json& value) {
  std::random_device random;
  fs::path path =
      fs::temp_directory_path() / ("flashps_scheduler_test_" + std::to_string(random()) + ".json");
  std::ofstream(path) << value.dump();
  return path;
}

}  // namespace

TEST_CASE("every scheduler matches diffusers trajectories", "[scheduler]") {
  FLASHPS_REQUIRE_FIXTURE(dir, "schedulers");
  auto report = flashps::dev::run_schedulers_fixture(dir.string());
  // One case per run of every entry, plus its add_noise triple: however many the folder holds
  // (an entry of a class this build lacks leaves the count short and fails).
  size_t expected_cases = 0;
  const nlohmann::json fixture = flashps::read_json_file((dir / "schedulers.json").string());
  for (const auto& entry : fixture.at("entries"))
    expected_cases += entry.at("runs").size() + (entry.contains("add_noise") ? 1 : 0);
  REQUIRE(expected_cases > 0);
  REQUIRE(report.cases.size() == expected_cases);
  for (const auto& fixture_case : report.cases) {
    INFO("case " << fixture_case.name << " " << fixture_case.error);
    REQUIRE(fixture_case.outputs.size() >= 2);
    for (const auto& output : fixture_case.outputs) {
      INFO(output.output << ": max |error| " << output.max_abs_error << ", worst error/allowed "
                         << output.worst_ratio);
      CHECK(output.passed);
    }
    CHECK(fixture_case.passed());
  }
  REQUIRE(report.passed());
}

TEST_CASE("FlowMatch static schedule: monotone, from 1 to a final 0", "[scheduler]") {
  auto scheduler = sd3_scheduler();
  REQUIRE(scheduler.num_steps() == 0);
  scheduler.set_timesteps(28);
  REQUIRE(scheduler.num_steps() == 28);
  const auto timesteps = to_vector(scheduler.timesteps());
  const auto sigmas = to_vector(scheduler.sigmas());
  REQUIRE(timesteps.size() == 28);
  REQUIRE(sigmas.size() == 29);
  REQUIRE(sigmas.front() == 1.0f);
  REQUIRE(sigmas.back() == 0.0f);
  for (size_t i = 0; i + 1 < sigmas.size(); ++i) REQUIRE(sigmas[i] > sigmas[i + 1]);
  for (size_t i = 0; i < timesteps.size(); ++i) REQUIRE(timesteps[i] == sigmas[i] * 1000.0f);
  REQUIRE(scheduler.init_noise_sigma() == 1.0);
  // The last sigma is the training schedule's minimum 1/1000, shifted twice as diffusers does.
  REQUIRE(sigmas[27] == Approx(0.008928571).epsilon(1e-5));
}

TEST_CASE("FlowMatch dynamic shifting uses mu", "[scheduler]") {
  auto scheduler = flux_scheduler();
  REQUIRE_THROWS_WITH(scheduler.set_timesteps(4), Contains("mu"));

  // mu = 0 makes the exponential time shift the identity: sigmas = linspace(1, 1/n, n).
  scheduler.set_timesteps(4, 0.0);
  const auto identity = to_vector(scheduler.sigmas());
  REQUIRE(identity == std::vector<float>{1.0f, 0.75f, 0.5f, 0.25f, 0.0f});

  scheduler.set_timesteps(4, 0.5);
  const auto low = to_vector(scheduler.sigmas());
  scheduler.set_timesteps(4, 1.15);
  const auto high = to_vector(scheduler.sigmas());
  REQUIRE(high.front() == 1.0f);
  REQUIRE(high.back() == 0.0f);
  for (size_t i = 1; i + 1 < high.size(); ++i) {
    REQUIRE(low[i] > identity[i]);  // a larger image (larger mu) keeps more noise at each step
    REQUIRE(high[i] > low[i]);
    REQUIRE(low[i] == Approx(std::exp(0.5) / (std::exp(0.5) + 1.0 / identity[i] - 1.0)));
  }
}

TEST_CASE("calculate_flux_shift interpolates between base and max shift", "[scheduler]") {
  REQUIRE(flashps::calculate_flux_shift(256) == Approx(0.5));
  REQUIRE(flashps::calculate_flux_shift(4096) == Approx(1.15));
  REQUIRE(flashps::calculate_flux_shift(1024) == Approx(0.63));
  FlowMatchEulerDiscreteConfig config;
  config.use_dynamic_shifting = true;
  config.base_shift = 0.25;
  config.max_shift = 0.75;
  config.base_image_seq_len = 0;
  config.max_image_seq_len = 1000;
  REQUIRE(FlowMatchEulerDiscreteScheduler(config).dynamic_shift_mu(500) == Approx(0.5));
}

TEST_CASE("FlowMatch step is an Euler step and keeps no per-request state", "[scheduler]") {
  auto scheduler = flux_scheduler();
  scheduler.set_timesteps(6, 0.8);
  const auto sigmas = to_vector(scheduler.sigmas());
  at::manual_seed(4);
  at::Tensor sample = at::randn({1, 4, 8, 8});
  at::Tensor velocity = at::randn({1, 4, 8, 8});
  auto state = scheduler.make_state();
  at::Tensor next = scheduler.step(velocity, 2, sample, *state);
  REQUIRE(at::allclose(next, sample + (sigmas[3] - sigmas[2]) * velocity, 1e-6, 1e-6));
  REQUIRE(scheduler.scale_model_input(sample, 0).is_same(sample));

  // Two requests on one scheduler, interleaved at different steps, equal two separate runs.
  auto run_alone = [&](at::Tensor start, int steps) {
    auto own_state = scheduler.make_state();
    for (int i = 0; i < steps; ++i) start = scheduler.step(start * 0.3, i, start, *own_state);
    return start;
  };
  at::Tensor first = sample.clone(), second = velocity.clone();
  auto first_state = scheduler.make_state(), second_state = scheduler.make_state();
  first = scheduler.step(first * 0.3, 0, first, *first_state);
  first = scheduler.step(first * 0.3, 1, first, *first_state);
  for (int i = 0; i < 6; ++i) {
    second = scheduler.step(second * 0.3, i, second, *second_state);
    if (i + 2 < 6) first = scheduler.step(first * 0.3, i + 2, first, *first_state);
  }
  REQUIRE(at::equal(first, run_alone(sample.clone(), 6)));
  REQUIRE(at::equal(second, run_alone(velocity.clone(), 6)));

  // A bfloat16 model output gives a bfloat16 sample (the update itself runs in float32).
  at::Tensor bf16_next = scheduler.step(velocity.to(at::kBFloat16), 0, sample, *state);
  REQUIRE(bf16_next.scalar_type() == at::kBFloat16);

  REQUIRE_THROWS_AS(scheduler.step(velocity, 6, sample, *state), flashps::Error);
  REQUIRE_THROWS_AS(scheduler.step(velocity, -1, sample, *state), flashps::Error);
  REQUIRE_THROWS_WITH(sd3_scheduler().step(velocity, 0, sample, *state), Contains("set_timesteps"));
}

TEST_CASE("FlowMatch add_noise interpolates between the template and the noise", "[scheduler]") {
  auto scheduler = sd3_scheduler();
  scheduler.set_timesteps(10);
  at::manual_seed(5);
  at::Tensor original = at::randn({1, 4, 8, 8});
  at::Tensor noise = at::randn({1, 4, 8, 8});
  REQUIRE(at::allclose(scheduler.add_noise(original, noise, 0), noise));
  REQUIRE(at::equal(scheduler.add_noise(original, noise, 10), original));
  const float sigma = to_vector(scheduler.sigmas())[3];
  REQUIRE(at::allclose(scheduler.add_noise(original, noise, 3),
                       sigma * noise + (1 - sigma) * original, 1e-6, 1e-6));
  REQUIRE_THROWS_AS(scheduler.add_noise(original, noise, 11), flashps::Error);
}

TEST_CASE("load_scheduler dispatches on _class_name", "[scheduler]") {
  nlohmann::json config = {{"_class_name", "FlowMatchEulerDiscreteScheduler"},
                           {"num_train_timesteps", 1000},
                           {"shift", 3.0},
                           {"use_dynamic_shifting", true},
                           {"base_shift", 0.5},
                           {"max_shift", 1.15},
                           {"shift_terminal", nullptr},
                           {"use_karras_sigmas", false}};
  const fs::path flow_path = write_temporary_json(config);
  auto scheduler = flashps::load_scheduler(flow_path.string());
  fs::remove(flow_path);
  REQUIRE(scheduler->class_name() == "FlowMatchEulerDiscreteScheduler");
  scheduler->set_timesteps(4, 0.63);
  REQUIRE(scheduler->timesteps()[1].item<float>() == Approx(849.2348).epsilon(1e-6));
  auto copy = scheduler->clone();
  copy->set_timesteps(10, 0.63);
  REQUIRE(scheduler->num_steps() == 4);  // clones are independent
  REQUIRE(copy->num_steps() == 10);

  config["_class_name"] = "LMSDiscreteScheduler";
  const fs::path lms_path = write_temporary_json(config);
  REQUIRE_THROWS_WITH(
      flashps::load_scheduler(lms_path.string()),
      Contains("LMSDiscreteScheduler") && Contains("not supported yet") && Contains(lms_path.string()));
  fs::remove(lms_path);

  config["_class_name"] = "FlowMatchEulerDiscreteScheduler";
  config["use_karras_sigmas"] = true;
  REQUIRE_THROWS_WITH(flashps::make_scheduler(config, "scheduler_config.json"),
                      Contains("use_karras_sigmas"));
  REQUIRE_THROWS_WITH(flashps::make_scheduler(nlohmann::json::object(), "scheduler_config.json"),
                      Contains("_class_name"));
}
