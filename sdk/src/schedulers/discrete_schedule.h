// What the DDPM-family schedulers (DDIM, Euler discrete, DPM-Solver++, PNDM) share: the beta
// schedule and its cumulative alphas (float32, as diffusers computes them), and the spacing of
// inference timesteps over the training timesteps ("leading", "trailing", "linspace").
#pragma once
#include <ATen/Tensor.h>

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace flashps {

struct DiscreteScheduleConfig {
  int num_train_timesteps = 1000;
  double beta_start = 0.0001, beta_end = 0.02;
  std::string beta_schedule = "linear";  // linear | scaled_linear | squaredcos_cap_v2
  std::vector<double> trained_betas;     // overrides the schedule when given
  bool rescale_betas_zero_snr = false;
  std::string prediction_type = "epsilon";  // epsilon | v_prediction | sample
  std::string timestep_spacing = "leading";
  int steps_offset = 0;
  bool set_alpha_to_one = true;  // DDIM/PNDM: alpha of the step before 0
  bool clip_sample = false;      // DDIM: clamp predicted x0
  double clip_sample_range = 1.0;
};

// Reads the keys above (missing ones keep the given defaults); rejects options this build does
// not implement (thresholding, karras/exponential/beta sigmas, ...) with an Error naming
// `source_name`.
DiscreteScheduleConfig parse_discrete_schedule(const nlohmann::json& config, const std::string& source_name,
                                               DiscreteScheduleConfig defaults = {});

// alphas_cumprod [num_train_timesteps], float32.
std::vector<float> alphas_cumprod(const DiscreteScheduleConfig& config);

// Inference timesteps, descending, as diffusers' set_timesteps spaces them.
std::vector<int64_t> spaced_timesteps(const DiscreteScheduleConfig& config, int num_inference_steps);

// x0 and epsilon from a model output at cumulative alpha `alpha_prod` (prediction type aware).
void predicted_x0_and_epsilon(const DiscreteScheduleConfig& config, const at::Tensor& model_output,
                              const at::Tensor& sample, double alpha_prod, at::Tensor& x0, at::Tensor& epsilon);

}  // namespace flashps
