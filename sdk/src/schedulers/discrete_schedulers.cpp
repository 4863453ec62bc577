#include "schedulers/discrete_schedulers.h"

#include <ATen/ATen.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/diagnostics/error.h"

namespace flashps {
namespace {

// numpy.interp at integer or fractional timesteps over the training sigmas.
std::vector<double> interpolated_sigmas(const std::vector<float>& alphas_cumprod, const std::vector<double>& timesteps) {
  std::vector<float> train_sigmas;
  for (float alpha : alphas_cumprod) train_sigmas.push_back(std::sqrt((1.0f - alpha) / alpha));  // float32, as torch
  std::vector<double> sigmas;
  for (double t : timesteps) {
    const double clamped = std::clamp(t, 0.0, double(train_sigmas.size() - 1));
    const size_t low = static_cast<size_t>(std::floor(clamped));
    const size_t high = std::min(low + 1, train_sigmas.size() - 1);
    const double fraction = clamped - double(low);
    sigmas.push_back(double(train_sigmas[low]) + fraction * (double(train_sigmas[high]) - double(train_sigmas[low])));
  }
  return sigmas;
}

at::Tensor float_tensor(const std::vector<float>& values) {
  return at::tensor(std::vector<float>(values), at::kFloat);
}

struct DpmState : SchedulerState {
  at::Tensor previous_x0, current_x0;  // converted model outputs of the last two steps
  int lower_order_steps = 0;
};

struct PndmState : SchedulerState {
  std::vector<at::Tensor> ets;  // the last model outputs (up to 4)
  at::Tensor current_sample;
  int counter = 0;
};

}  // namespace

DiscreteTimeScheduler::DiscreteTimeScheduler(DiscreteScheduleConfig config)
    : config_(std::move(config)), alphas_cumprod_(alphas_cumprod(config_)) {}

int64_t DiscreteTimeScheduler::timestep_at(int step_index) const {
  if (step_index < 0 || step_index >= num_steps())
    throw Error(class_name() + ": step index " + std::to_string(step_index) + " outside the schedule of " +
                std::to_string(num_steps()) + " steps");
  return timestep_values_[static_cast<size_t>(step_index)];
}

double DiscreteTimeScheduler::alpha_prod(int64_t timestep) const {
  if (timestep < 0) return config_.set_alpha_to_one ? 1.0 : double(alphas_cumprod_.front());
  return double(alphas_cumprod_.at(static_cast<size_t>(timestep)));
}

void DiscreteTimeScheduler::set_timestep_values(const std::vector<int64_t>& values) {
  for (int64_t t : values)
    if (t < 0 || t >= config_.num_train_timesteps)
      throw Error(class_name() + ": timestep " + std::to_string(t) + " outside [0, num_train_timesteps)");
  timestep_values_ = values;
  timesteps_ = at::tensor(std::vector<int64_t>(values), at::kLong);
}

at::Tensor DiscreteTimeScheduler::add_noise(const at::Tensor& original, const at::Tensor& noise, int step_index) const {
  const double alpha = alpha_prod(timestep_at(step_index));
  return std::sqrt(alpha) * original + std::sqrt(1 - alpha) * noise;
}

// --- DDIM -------------------------------------------------------------------------------------

void DDIMScheduler::set_timesteps(int steps, std::optional<double>) {
  inference_steps_ = steps;
  set_timestep_values(spaced_timesteps(config_, steps));
}

at::Tensor DDIMScheduler::step(const at::Tensor& model_output, int step_index, const at::Tensor& sample,
                               SchedulerState&) const {
  const int64_t timestep = timestep_at(step_index);
  const int64_t previous = timestep - config_.num_train_timesteps / inference_steps_;
  const double alpha = alpha_prod(timestep), alpha_prev = alpha_prod(previous);
  at::Tensor x0, epsilon;
  predicted_x0_and_epsilon(config_, model_output, sample, alpha, x0, epsilon);
  if (config_.clip_sample) x0 = x0.clamp(-config_.clip_sample_range, config_.clip_sample_range);
  return std::sqrt(alpha_prev) * x0 + std::sqrt(1 - alpha_prev) * epsilon;  // eta = 0
}

// --- Euler discrete ---------------------------------------------------------------------------

void EulerDiscreteScheduler::set_timesteps(int steps, std::optional<double>) {
  const int train = config_.num_train_timesteps;
  std::vector<double> timesteps;
  if (config_.timestep_spacing == "linspace") {  // fractional timesteps, interpolated
    for (int i = steps - 1; i >= 0; --i)
      timesteps.push_back(double(static_cast<float>(steps == 1 ? 0.0 : double(train - 1) * i / (steps - 1))));
  } else {
    for (int64_t t : spaced_timesteps(config_, steps)) timesteps.push_back(double(t));
  }
  inference_steps_ = steps;
  std::vector<int64_t> rounded;
  for (double t : timesteps) rounded.push_back(static_cast<int64_t>(std::nearbyint(t)));
  timestep_values_ = rounded;
  std::vector<float> as_float(timesteps.begin(), timesteps.end());
  timesteps_ = float_tensor(as_float);
  sigma_values_.clear();
  for (double sigma : interpolated_sigmas(alphas_cumprod_, timesteps)) sigma_values_.push_back(static_cast<float>(sigma));
  sigma_values_.push_back(0.0f);
  sigmas_ = float_tensor(sigma_values_);
}

double EulerDiscreteScheduler::init_noise_sigma() const {
  if (sigma_values_.empty()) return 1.0;
  const double max_sigma = *std::max_element(sigma_values_.begin(), sigma_values_.end());
  if (config_.timestep_spacing == "linspace" || config_.timestep_spacing == "trailing") return max_sigma;
  return std::sqrt(max_sigma * max_sigma + 1);
}

at::Tensor EulerDiscreteScheduler::scale_model_input(const at::Tensor& sample, int step_index) const {
  timestep_at(step_index);
  const double sigma = sigma_values_[static_cast<size_t>(step_index)];
  return sample / std::sqrt(sigma * sigma + 1);
}

at::Tensor EulerDiscreteScheduler::step(const at::Tensor& model_output, int step_index, const at::Tensor& sample,
                                        SchedulerState&) const {
  timestep_at(step_index);
  const double sigma = sigma_values_[static_cast<size_t>(step_index)];
  const double next = sigma_values_[static_cast<size_t>(step_index) + 1];
  at::Tensor x0;
  if (config_.prediction_type == "epsilon") x0 = sample - sigma * model_output;
  else if (config_.prediction_type == "v_prediction")
    x0 = model_output * (-sigma / std::sqrt(sigma * sigma + 1)) + sample / (sigma * sigma + 1);
  else x0 = model_output;
  const at::Tensor derivative = (sample - x0) / sigma;
  return sample + derivative * (next - sigma);
}

at::Tensor EulerDiscreteScheduler::add_noise(const at::Tensor& original, const at::Tensor& noise, int step_index) const {
  timestep_at(step_index);
  return original + noise * double(sigma_values_[static_cast<size_t>(step_index)]);
}

// --- DPM-Solver++ 2M --------------------------------------------------------------------------

void DPMSolverMultistepScheduler::set_timesteps(int steps, std::optional<double>) {
  const int train = config_.num_train_timesteps;  // lambda_min_clipped = -inf: no clipping
  if (steps < 1 || steps > train) throw Error("DPMSolverMultistepScheduler: num_inference_steps out of range");
  std::vector<int64_t> values;
  if (config_.timestep_spacing == "linspace") {
    const double step = double(train - 1) / steps;  // numpy linspace(0, train - 1, steps + 1)
    for (int i = steps; i >= 1; --i) values.push_back(static_cast<int64_t>(std::nearbyint(i * step)));
  } else if (config_.timestep_spacing == "leading") {
    const int64_t ratio = train / (steps + 1);
    for (int i = steps; i >= 1; --i) values.push_back(int64_t(i) * ratio + config_.steps_offset);
  } else {
    const double ratio = double(train) / steps;
    for (double t = train; t > 0 && static_cast<int>(values.size()) < steps; t -= ratio)
      values.push_back(static_cast<int64_t>(std::nearbyint(t)) - 1);
  }
  inference_steps_ = steps;
  set_timestep_values(values);
  std::vector<double> as_double(values.begin(), values.end());
  sigma_values_.clear();
  for (double sigma : interpolated_sigmas(alphas_cumprod_, as_double)) sigma_values_.push_back(static_cast<float>(sigma));
  sigma_values_.push_back(0.0f);  // final_sigmas_type "zero"
  sigmas_ = float_tensor(sigma_values_);
}

std::unique_ptr<SchedulerState> DPMSolverMultistepScheduler::make_state() const {
  return std::make_unique<DpmState>();
}

at::Tensor DPMSolverMultistepScheduler::step(const at::Tensor& model_output, int step_index, const at::Tensor& sample,
                                             SchedulerState& base_state) const {
  auto* state = dynamic_cast<DpmState*>(&base_state);
  if (!state) throw Error("DPMSolverMultistepScheduler: step() needs the state from make_state()");
  timestep_at(step_index);
  auto alpha_sigma = [](double sigma, double& alpha, double& sigma_t) {
    alpha = 1.0 / std::sqrt(sigma * sigma + 1);
    sigma_t = sigma * alpha;
  };
  const size_t i = static_cast<size_t>(step_index);
  double alpha_s0, sigma_s0;
  alpha_sigma(sigma_values_[i], alpha_s0, sigma_s0);
  // Converted model output: the data prediction x0 (DPM-Solver++).
  at::Tensor x0;
  if (config_.prediction_type == "epsilon") x0 = (sample - sigma_s0 * model_output) / alpha_s0;
  else if (config_.prediction_type == "v_prediction") x0 = alpha_s0 * sample - sigma_s0 * model_output;
  else x0 = model_output;
  state->previous_x0 = state->current_x0;
  state->current_x0 = x0;

  const int steps = num_steps();
  const bool lower_order_final = step_index == steps - 1;  // final sigma is zero
  double alpha_t, sigma_t;
  alpha_sigma(sigma_values_[i + 1], alpha_t, sigma_t);
  const double lambda_t = std::log(alpha_t) - std::log(sigma_t), lambda_s0 = std::log(alpha_s0) - std::log(sigma_s0);
  const double h = lambda_t - lambda_s0;
  const double ratio = sigma_t / sigma_s0, decay = std::expm1(-h);  // exp(-h) - 1
  at::Tensor next;
  if (state->lower_order_steps < 1 || lower_order_final) {
    next = ratio * sample - (alpha_t * decay) * x0;
  } else {
    double alpha_s1, sigma_s1;
    alpha_sigma(sigma_values_[i - 1], alpha_s1, sigma_s1);
    const double lambda_s1 = std::log(alpha_s1) - std::log(sigma_s1);
    const double r0 = (lambda_s0 - lambda_s1) / h;
    const at::Tensor d1 = (1.0 / r0) * (x0 - state->previous_x0);
    next = ratio * sample - (alpha_t * decay) * x0 - 0.5 * (alpha_t * decay) * d1;
  }
  if (state->lower_order_steps < 2) ++state->lower_order_steps;
  return next;
}

at::Tensor DPMSolverMultistepScheduler::add_noise(const at::Tensor& original, const at::Tensor& noise,
                                                  int step_index) const {
  timestep_at(step_index);
  const double sigma = sigma_values_[static_cast<size_t>(step_index)];
  const double alpha = 1.0 / std::sqrt(sigma * sigma + 1);
  return alpha * original + sigma * alpha * noise;
}

// --- PNDM (PLMS) ------------------------------------------------------------------------------

void PNDMScheduler::set_timesteps(int steps, std::optional<double>) {
  std::vector<int64_t> ascending = spaced_timesteps(config_, steps);
  std::reverse(ascending.begin(), ascending.end());
  // skip_prk_steps: [t_0 .. t_{n-2}, t_{n-2}, t_{n-1}] reversed (the second-to-last repeats).
  std::vector<int64_t> plms(ascending.begin(), ascending.end() - 1);
  if (steps >= 2) plms.push_back(ascending[ascending.size() - 2]);
  plms.push_back(ascending.back());
  std::reverse(plms.begin(), plms.end());
  inference_steps_ = steps;
  set_timestep_values(plms);
}

std::unique_ptr<SchedulerState> PNDMScheduler::make_state() const { return std::make_unique<PndmState>(); }

at::Tensor PNDMScheduler::step(const at::Tensor& model_output, int step_index, const at::Tensor& sample,
                               SchedulerState& base_state) const {
  auto* state = dynamic_cast<PndmState*>(&base_state);
  if (!state) throw Error("PNDMScheduler: step() needs the state from make_state()");
  int64_t timestep = timestep_at(step_index);
  const int64_t stride = config_.num_train_timesteps / inference_steps_;
  int64_t previous = timestep - stride;
  if (state->counter != 1) {
    if (state->ets.size() > 3) state->ets.erase(state->ets.begin(), state->ets.end() - 3);
    state->ets.push_back(model_output);
  } else {
    previous = timestep;
    timestep = timestep + stride;
  }
  const auto& ets = state->ets;
  at::Tensor output = model_output, current = sample;
  if (ets.size() == 1 && state->counter == 0) {
    state->current_sample = sample;
  } else if (ets.size() == 1 && state->counter == 1) {
    output = (model_output + ets.back()) / 2;
    current = state->current_sample;
    state->current_sample = at::Tensor();
  } else if (ets.size() == 2) {
    output = (3 * ets[1] - ets[0]) / 2;
  } else if (ets.size() == 3) {
    output = (23 * ets[2] - 16 * ets[1] + 5 * ets[0]) / 12;
  } else {
    const size_t n = ets.size();
    output = (1.0 / 24) * (55 * ets[n - 1] - 59 * ets[n - 2] + 37 * ets[n - 3] - 9 * ets[n - 4]);
  }
  const double alpha = alpha_prod(timestep), alpha_prev = alpha_prod(previous);
  const double beta = 1 - alpha, beta_prev = 1 - alpha_prev;
  if (config_.prediction_type == "v_prediction") output = std::sqrt(alpha) * output + std::sqrt(beta) * current;
  else if (config_.prediction_type != "epsilon") throw Error("PNDMScheduler: prediction_type must be epsilon or v_prediction");
  const double sample_coefficient = std::sqrt(alpha_prev / alpha);
  const double denominator = alpha * std::sqrt(beta_prev) + std::sqrt(alpha * beta * alpha_prev);
  ++state->counter;
  return sample_coefficient * current - (alpha_prev - alpha) * output / denominator;
}

// --- construction -----------------------------------------------------------------------------

std::unique_ptr<Scheduler> make_discrete_scheduler(const std::string& class_name, const nlohmann::json& config,
                                                   const std::string& source_name) {
  if (class_name == "DDIMScheduler") {
    DiscreteScheduleConfig defaults;
    defaults.clip_sample = true;  // diffusers' DDIM default
    return std::make_unique<DDIMScheduler>(parse_discrete_schedule(config, source_name, defaults));
  }
  if (class_name == "EulerDiscreteScheduler") {
    if (config.value("interpolation_type", std::string("linear")) != "linear" ||
        config.value("timestep_type", std::string("discrete")) != "discrete" ||
        config.value("final_sigmas_type", std::string("zero")) != "zero")
      throw Error(source_name + ": EulerDiscreteScheduler supports linear interpolation, discrete timesteps and a zero final sigma");
    return std::make_unique<EulerDiscreteScheduler>(parse_discrete_schedule(config, source_name));
  }
  if (class_name == "DPMSolverMultistepScheduler") {
    if (config.value("algorithm_type", std::string("dpmsolver++")) != "dpmsolver++" ||
        config.value("solver_order", 2) != 2 || config.value("solver_type", std::string("midpoint")) != "midpoint" ||
        config.value("final_sigmas_type", std::string("zero")) != "zero" || config.value("euler_at_final", false) ||
        !config.value("lower_order_final", true))
      throw Error(source_name + ": DPMSolverMultistepScheduler supports DPM-Solver++ 2M (order 2, midpoint, "
                                "lower-order final steps, zero final sigma)");
    DiscreteScheduleConfig defaults;
    defaults.timestep_spacing = "linspace";
    return std::make_unique<DPMSolverMultistepScheduler>(parse_discrete_schedule(config, source_name, defaults));
  }
  if (class_name == "PNDMScheduler") {
    if (!config.value("skip_prk_steps", false))
      throw Error(source_name + ": PNDMScheduler supports skip_prk_steps = true (PLMS), as Stable Diffusion uses");
    return std::make_unique<PNDMScheduler>(parse_discrete_schedule(config, source_name));
  }
  return nullptr;
}

}  // namespace flashps
