// The DDPM-family schedulers of Stable Diffusion pipelines (diffusers v0.32 semantics), behind
// the Scheduler interface (schedulers/scheduler.h): steps are addressed by index, and what a
// multistep method remembers between steps lives in the request's SchedulerState.
//   DDIMScheduler                deterministic DDIM (eta = 0), epsilon / v / sample prediction
//   EulerDiscreteScheduler       Euler steps in sigma space (Karras et al.), s_churn = 0
//   DPMSolverMultistepScheduler  DPM-Solver++ 2M (midpoint), lower-order final steps
//   PNDMScheduler                PLMS (skip_prk_steps: the linear multistep part only)
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "schedulers/discrete_schedule.h"
#include "schedulers/scheduler.h"

namespace flashps {

// Shared state of the four: config, cumulative alphas, the configured timesteps.
class DiscreteTimeScheduler : public Scheduler {
 public:
  explicit DiscreteTimeScheduler(DiscreteScheduleConfig config);
  const DiscreteScheduleConfig& config() const { return config_; }
  int num_steps() const override { return timesteps_.defined() ? static_cast<int>(timesteps_.size(0)) : 0; }
  const at::Tensor& timesteps() const override { return timesteps_; }
  const at::Tensor& sigmas() const override { return sigmas_; }
  double init_noise_sigma() const override { return 1.0; }
  at::Tensor scale_model_input(const at::Tensor& sample, int) const override { return sample; }
  // sqrt(alpha_cumprod[t]) * original + sqrt(1 - alpha_cumprod[t]) * noise at step_index's t.
  at::Tensor add_noise(const at::Tensor& original, const at::Tensor& noise, int step_index) const override;

 protected:
  int64_t timestep_at(int step_index) const;  // Error outside the schedule
  double alpha_prod(int64_t timestep) const;  // final alpha for timestep < 0
  void set_timestep_values(const std::vector<int64_t>& values);

  DiscreteScheduleConfig config_;
  std::vector<float> alphas_cumprod_;
  std::vector<int64_t> timestep_values_;
  at::Tensor timesteps_, sigmas_;
  int inference_steps_ = 0;
};

class DDIMScheduler : public DiscreteTimeScheduler {
 public:
  using DiscreteTimeScheduler::DiscreteTimeScheduler;
  std::string class_name() const override { return "DDIMScheduler"; }
  std::unique_ptr<Scheduler> clone() const override { return std::make_unique<DDIMScheduler>(*this); }
  void set_timesteps(int num_inference_steps, std::optional<double> mu = std::nullopt) override;
  at::Tensor step(const at::Tensor& model_output, int step_index, const at::Tensor& sample,
                  SchedulerState& state) const override;
};

class EulerDiscreteScheduler : public DiscreteTimeScheduler {
 public:
  using DiscreteTimeScheduler::DiscreteTimeScheduler;
  std::string class_name() const override { return "EulerDiscreteScheduler"; }
  std::unique_ptr<Scheduler> clone() const override { return std::make_unique<EulerDiscreteScheduler>(*this); }
  void set_timesteps(int num_inference_steps, std::optional<double> mu = std::nullopt) override;
  double init_noise_sigma() const override;
  at::Tensor scale_model_input(const at::Tensor& sample, int step_index) const override;
  at::Tensor step(const at::Tensor& model_output, int step_index, const at::Tensor& sample,
                  SchedulerState& state) const override;
  at::Tensor add_noise(const at::Tensor& original, const at::Tensor& noise, int step_index) const override;

 private:
  std::vector<float> sigma_values_;  // per step, then a final 0
};

class DPMSolverMultistepScheduler : public DiscreteTimeScheduler {
 public:
  using DiscreteTimeScheduler::DiscreteTimeScheduler;
  std::string class_name() const override { return "DPMSolverMultistepScheduler"; }
  std::unique_ptr<Scheduler> clone() const override { return std::make_unique<DPMSolverMultistepScheduler>(*this); }
  void set_timesteps(int num_inference_steps, std::optional<double> mu = std::nullopt) override;
  std::unique_ptr<SchedulerState> make_state() const override;
  at::Tensor step(const at::Tensor& model_output, int step_index, const at::Tensor& sample,
                  SchedulerState& state) const override;
  at::Tensor add_noise(const at::Tensor& original, const at::Tensor& noise, int step_index) const override;

 private:
  std::vector<float> sigma_values_;
};

class PNDMScheduler : public DiscreteTimeScheduler {
 public:
  using DiscreteTimeScheduler::DiscreteTimeScheduler;
  std::string class_name() const override { return "PNDMScheduler"; }
  std::unique_ptr<Scheduler> clone() const override { return std::make_unique<PNDMScheduler>(*this); }
  void set_timesteps(int num_inference_steps, std::optional<double> mu = std::nullopt) override;
  std::unique_ptr<SchedulerState> make_state() const override;
  at::Tensor step(const at::Tensor& model_output, int step_index, const at::Tensor& sample,
                  SchedulerState& state) const override;
};

// Builds one of the four from a scheduler_config.json object (dispatch on "_class_name").
std::unique_ptr<Scheduler> make_discrete_scheduler(const std::string& class_name, const nlohmann::json& config,
                                                   const std::string& source_name);

}  // namespace flashps
