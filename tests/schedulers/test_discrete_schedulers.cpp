#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/diagnostics/error.h"
#include "schedulers/discrete_schedulers.h"

using namespace flashps;

namespace {

nlohmann::json sd_config(const std::string& class_name) {
  return {{"_class_name", class_name}, {"beta_start", 0.00085}, {"beta_end", 0.012},
          {"beta_schedule", "scaled_linear"}, {"num_train_timesteps", 1000}, {"steps_offset", 1},
          {"skip_prk_steps", true}, {"set_alpha_to_one", false}, {"clip_sample", false}};
}

std::vector<int64_t> timesteps_of(const Scheduler& scheduler) {
  at::Tensor t = scheduler.timesteps().to(at::kLong).contiguous();
  return {t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + t.numel()};
}

}  // namespace

TEST_CASE("timestep spacings follow diffusers", "[scheduler]") {
  nlohmann::json config = sd_config("DDIMScheduler");
  auto leading = make_scheduler(config, "test");
  leading->set_timesteps(4);
  CHECK(timesteps_of(*leading) == std::vector<int64_t>{751, 501, 251, 1});
  config["timestep_spacing"] = "trailing";
  auto trailing = make_scheduler(config, "test");
  trailing->set_timesteps(4);
  CHECK(timesteps_of(*trailing) == std::vector<int64_t>{999, 749, 499, 249});
  config["timestep_spacing"] = "linspace";
  auto linspace = make_scheduler(config, "test");
  linspace->set_timesteps(4);
  CHECK(timesteps_of(*linspace) == std::vector<int64_t>{999, 666, 333, 0});
  auto pndm = make_scheduler(sd_config("PNDMScheduler"), "test");
  pndm->set_timesteps(4);
  CHECK(timesteps_of(*pndm) == std::vector<int64_t>{751, 501, 501, 251, 1});  // PLMS repeats one
}

TEST_CASE("multistep schedulers keep their memory per request", "[scheduler]") {
  for (const char* name : {"DPMSolverMultistepScheduler", "PNDMScheduler"}) {
    auto scheduler = make_scheduler(sd_config(name), "test");
    scheduler->set_timesteps(6);
    auto run = [&](std::unique_ptr<SchedulerState>& state, at::Tensor sample, int step) {
      return scheduler->step(sample * 0.3, step, sample, *state);
    };
    // Two requests stepped alternately equal each stepped alone.
    auto state_a = scheduler->make_state(), state_b = scheduler->make_state(), state_alone = scheduler->make_state();
    at::Tensor a = at::ones({1, 4, 2, 2}), b = at::full({1, 4, 2, 2}, -2.0), alone = a.clone();
    for (int step = 0; step < scheduler->num_steps(); ++step) {
      a = run(state_a, a, step);
      b = run(state_b, b, step);
      alone = run(state_alone, alone, step);
    }
    INFO(name);
    CHECK(at::equal(a, alone));
  }
}

TEST_CASE("unsupported scheduler options are named in errors", "[scheduler]") {
  nlohmann::json config = sd_config("PNDMScheduler");
  config["skip_prk_steps"] = false;
  CHECK_THROWS_WITH(make_scheduler(config, "pndm.json"), Catch::Contains("pndm.json") && Catch::Contains("skip_prk_steps"));
  config = sd_config("DPMSolverMultistepScheduler");
  config["solver_order"] = 3;
  CHECK_THROWS_WITH(make_scheduler(config, "dpm.json"), Catch::Contains("2M"));
  config = sd_config("EulerDiscreteScheduler");
  config["use_karras_sigmas"] = true;
  CHECK_THROWS_WITH(make_scheduler(config, "euler.json"), Catch::Contains("use_karras_sigmas"));
  config = sd_config("DDIMScheduler");
  config["prediction_type"] = "flow";
  CHECK_THROWS_WITH(make_scheduler(config, "ddim.json"), Catch::Contains("prediction_type"));
  auto ddim = make_scheduler(sd_config("DDIMScheduler"), "test");
  ddim->set_timesteps(4);
  auto state = ddim->make_state();
  CHECK_THROWS_WITH(ddim->step(at::zeros({1}), 4, at::zeros({1}), *state), Catch::Contains("outside the schedule"));
  CHECK_THROWS_WITH(make_scheduler(nlohmann::json{{"_class_name", "LCMScheduler"}}, "lcm.json"),
                    Catch::Contains("not supported yet"));
}
