#include "schedulers/discrete_schedule.h"

#include <ATen/ATen.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/diagnostics/error.h"

namespace flashps {

DiscreteScheduleConfig parse_discrete_schedule(const nlohmann::json& config, const std::string& source_name,
                                               DiscreteScheduleConfig defaults) {
  DiscreteScheduleConfig parsed = defaults;
  auto number = [&](const char* key, double& value) {
    auto found = config.find(key);
    if (found != config.end() && !found->is_null()) {
      if (!found->is_number()) throw Error(source_name + ": '" + key + "' must be a number");
      value = found->get<double>();
    }
  };
  auto text = [&](const char* key, std::string& value) {
    auto found = config.find(key);
    if (found != config.end() && !found->is_null()) {
      if (!found->is_string()) throw Error(source_name + ": '" + key + "' must be a string");
      value = found->get<std::string>();
    }
  };
  auto flag = [&](const char* key, bool& value) {
    auto found = config.find(key);
    if (found != config.end() && !found->is_null()) {
      if (!found->is_boolean()) throw Error(source_name + ": '" + key + "' must be true or false");
      value = found->get<bool>();
    }
  };
  double train_steps = parsed.num_train_timesteps, offset = parsed.steps_offset;
  number("num_train_timesteps", train_steps);
  number("steps_offset", offset);
  parsed.num_train_timesteps = static_cast<int>(train_steps);
  parsed.steps_offset = static_cast<int>(offset);
  number("beta_start", parsed.beta_start);
  number("beta_end", parsed.beta_end);
  number("clip_sample_range", parsed.clip_sample_range);
  text("beta_schedule", parsed.beta_schedule);
  text("prediction_type", parsed.prediction_type);
  text("timestep_spacing", parsed.timestep_spacing);
  flag("rescale_betas_zero_snr", parsed.rescale_betas_zero_snr);
  flag("set_alpha_to_one", parsed.set_alpha_to_one);
  flag("clip_sample", parsed.clip_sample);
  if (auto trained = config.find("trained_betas"); trained != config.end() && trained->is_array())
    for (const auto& beta : *trained) parsed.trained_betas.push_back(beta.get<double>());
  if (parsed.num_train_timesteps < 2 || parsed.num_train_timesteps > 100000)
    throw Error(source_name + ": num_train_timesteps must be between 2 and 100000");
  if (parsed.beta_schedule != "linear" && parsed.beta_schedule != "scaled_linear" &&
      parsed.beta_schedule != "squaredcos_cap_v2")
    throw Error(source_name + ": beta_schedule '" + parsed.beta_schedule + "' is not supported");
  if (parsed.prediction_type != "epsilon" && parsed.prediction_type != "v_prediction" && parsed.prediction_type != "sample")
    throw Error(source_name + ": prediction_type '" + parsed.prediction_type + "' is not supported");
  if (parsed.timestep_spacing != "leading" && parsed.timestep_spacing != "trailing" && parsed.timestep_spacing != "linspace")
    throw Error(source_name + ": timestep_spacing '" + parsed.timestep_spacing + "' is not supported");
  bool unsupported = false;
  flag("thresholding", unsupported);
  if (unsupported) throw Error(source_name + ": thresholding is not supported");
  for (const char* key : {"use_karras_sigmas", "use_exponential_sigmas", "use_beta_sigmas"}) {
    bool on = false;
    flag(key, on);
    if (on) throw Error(source_name + ": " + key + " is not supported yet");
  }
  if (!parsed.trained_betas.empty() && static_cast<int>(parsed.trained_betas.size()) != parsed.num_train_timesteps)
    throw Error(source_name + ": trained_betas must have num_train_timesteps entries");
  return parsed;
}

std::vector<float> alphas_cumprod(const DiscreteScheduleConfig& config) {
  const int n = config.num_train_timesteps;
  at::Tensor betas;
  if (!config.trained_betas.empty()) {
    betas = at::tensor(config.trained_betas, at::kDouble).to(at::kFloat);
  } else if (config.beta_schedule == "linear") {
    betas = at::linspace(config.beta_start, config.beta_end, n, at::kFloat);
  } else if (config.beta_schedule == "scaled_linear") {
    betas = at::linspace(std::sqrt(config.beta_start), std::sqrt(config.beta_end), n, at::kFloat).pow(2);
  } else {  // squaredcos_cap_v2: betas_for_alpha_bar with the cosine alpha_bar
    std::vector<double> values;
    auto alpha_bar = [](double t) { return std::pow(std::cos((t + 0.008) / 1.008 * M_PI / 2), 2); };
    for (int i = 0; i < n; ++i)
      values.push_back(std::min(1 - alpha_bar(double(i + 1) / n) / alpha_bar(double(i) / n), 0.999));
    betas = at::tensor(values, at::kDouble).to(at::kFloat);
  }
  if (config.rescale_betas_zero_snr) {  // Lin et al. 2023, Algorithm 1
    at::Tensor alphas_bar_sqrt = (1 - betas).cumprod(0).sqrt();
    const at::Tensor first = alphas_bar_sqrt[0].clone(), last = alphas_bar_sqrt[-1].clone();
    alphas_bar_sqrt = (alphas_bar_sqrt - last) * first / (first - last);
    at::Tensor alphas_bar = alphas_bar_sqrt.pow(2);
    at::Tensor alphas = at::cat({alphas_bar.narrow(0, 0, 1), alphas_bar.narrow(0, 1, n - 1) / alphas_bar.narrow(0, 0, n - 1)});
    betas = 1 - alphas;
  }
  at::Tensor cumulative = (1 - betas).cumprod(0).contiguous();
  if (config.rescale_betas_zero_snr) cumulative[-1] = std::pow(2.0, -24);  // avoid an infinite sigma
  return std::vector<float>(cumulative.data_ptr<float>(), cumulative.data_ptr<float>() + n);
}

std::vector<int64_t> spaced_timesteps(const DiscreteScheduleConfig& config, int steps) {
  const int train = config.num_train_timesteps;
  if (steps < 1 || steps > train)
    throw Error("num_inference_steps must be between 1 and num_train_timesteps (" + std::to_string(train) + ")");
  std::vector<int64_t> timesteps;
  if (config.timestep_spacing == "leading") {
    const int64_t ratio = train / steps;
    for (int i = steps - 1; i >= 0; --i) timesteps.push_back(int64_t(i) * ratio + config.steps_offset);
  } else if (config.timestep_spacing == "trailing") {
    const double ratio = double(train) / steps;
    for (double t = train; t > 0 && static_cast<int>(timesteps.size()) < steps; t -= ratio)
      timesteps.push_back(static_cast<int64_t>(std::nearbyint(t)) - 1);
  } else {  // linspace(0, train - 1, steps), rounded, descending
    for (int i = steps - 1; i >= 0; --i)
      timesteps.push_back(static_cast<int64_t>(std::nearbyint(steps == 1 ? 0.0 : double(train - 1) * i / (steps - 1))));
  }
  return timesteps;
}

void predicted_x0_and_epsilon(const DiscreteScheduleConfig& config, const at::Tensor& model_output,
                              const at::Tensor& sample, double alpha_prod, at::Tensor& x0, at::Tensor& epsilon) {
  const double alpha = std::sqrt(alpha_prod), beta = std::sqrt(1 - alpha_prod);
  if (config.prediction_type == "epsilon") {
    x0 = (sample - beta * model_output) / alpha;
    epsilon = model_output;
  } else if (config.prediction_type == "v_prediction") {
    x0 = alpha * sample - beta * model_output;
    epsilon = alpha * model_output + beta * sample;
  } else {
    x0 = model_output;
    epsilon = (sample - alpha * model_output) / beta;
  }
}

}  // namespace flashps
