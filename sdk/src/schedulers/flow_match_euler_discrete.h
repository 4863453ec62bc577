// FlowMatchEulerDiscreteScheduler (diffusers v0.32): Euler steps of a rectified-flow ODE,
// x_next = x + (sigma_next - sigma) * velocity, used by Flux and SD3.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "schedulers/scheduler.h"

namespace flashps {

struct FlowMatchEulerDiscreteConfig {
  int num_train_timesteps = 1000;
  double shift = 1.0;  // static shift (SD3: 3.0), used when use_dynamic_shifting is false
  bool use_dynamic_shifting = false;  // Flux: shift by mu = calculate_flux_shift(image_seq_len)
  double base_shift = 0.5;
  double max_shift = 1.15;
  int base_image_seq_len = 256;
  int max_image_seq_len = 4096;
  bool exponential_time_shift = true;  // time_shift_type "exponential" (else "linear")
  double shift_terminal = 0.0;         // 0: off; else stretch so the last sigma equals it
};

// Parses the config; unknown keys are ignored, options this implementation lacks (karras /
// exponential / beta sigmas, invert_sigmas) are rejected with an Error naming `source_name`.
FlowMatchEulerDiscreteConfig parse_flow_match_config(const nlohmann::json& config,
                                                     const std::string& source_name);

// diffusers' calculate_shift: mu grows linearly with the number of image tokens, from base_shift
// at base_seq_len to max_shift at max_seq_len (Flux: tokens = (H/16) * (W/16)).
// The scheduler_config.json of FLUX.1 models: shift 3, dynamic shifting from 0.5 at 256 image
// tokens to 1.15 at 4096.
nlohmann::json flux_scheduler_config();

double calculate_flux_shift(int image_seq_len, int base_seq_len = 256, int max_seq_len = 4096,
                            double base_shift = 0.5, double max_shift = 1.15);

class FlowMatchEulerDiscreteScheduler : public Scheduler {
 public:
  explicit FlowMatchEulerDiscreteScheduler(FlowMatchEulerDiscreteConfig config = {});

  const FlowMatchEulerDiscreteConfig& config() const { return config_; }
  // calculate_flux_shift with this config's base/max sequence lengths and shifts.
  double dynamic_shift_mu(int image_seq_len) const;

  std::string class_name() const override { return "FlowMatchEulerDiscreteScheduler"; }
  std::unique_ptr<Scheduler> clone() const override;

  // Static shifting: diffusers' set_timesteps(n) (sigmas linspace(1, sigma_min, n), then
  // shifted; mu is ignored). Dynamic shifting: FluxPipeline's
  // set_timesteps(sigmas=linspace(1, 1/n, n), mu), which requires mu.
  void set_timesteps(int num_inference_steps, std::optional<double> mu = std::nullopt) override;
  // Custom unshifted sigmas (descending, in (0, 1]), shifted like the pipelines' `sigmas=` path.
  void set_sigmas(const std::vector<double>& unshifted_sigmas,
                  std::optional<double> mu = std::nullopt);

  int num_steps() const override {
    return sigma_values_.empty() ? 0 : static_cast<int>(sigma_values_.size()) - 1;
  }
  const at::Tensor& timesteps() const override { return timesteps_; }
  const at::Tensor& sigmas() const override { return sigmas_; }
  double init_noise_sigma() const override { return 1.0; }

  at::Tensor scale_model_input(const at::Tensor& sample, int step_index) const override;
  at::Tensor step(const at::Tensor& model_output, int step_index, const at::Tensor& sample,
                  SchedulerState& state) const override;
  // scale_noise: sigma * noise + (1 - sigma) * original.
  at::Tensor add_noise(const at::Tensor& original, const at::Tensor& noise,
                       int step_index) const override;

 private:
  // Shifts, stretches (shift_terminal) and stores a descending schedule of unshifted sigmas.
  void build_schedule(const std::vector<double>& unshifted_sigmas, std::optional<double> mu);
  double apply_shift(double sigma, std::optional<double> mu) const;
  void check_step_index(int step_index, int last_valid, const char* operation) const;

  FlowMatchEulerDiscreteConfig config_;
  std::vector<float> sigma_values_;  // the schedule incl. the final 0, as float32 like diffusers
  at::Tensor timesteps_;
  at::Tensor sigmas_;
};

}  // namespace flashps
