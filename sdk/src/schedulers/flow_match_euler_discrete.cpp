#include "schedulers/flow_match_euler_discrete.h"

#include <ATen/ATen.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/diagnostics/error.h"

namespace flashps {
namespace {

using nlohmann::json;

// Reads `key` as T, keeping `fallback` when it is absent or null (diffusers writes None as null).
template <typename T>
T value_or(const json& config, const char* key, T fallback, const std::string& source) {
  auto found = config.find(key);
  if (found == config.end() || found->is_null()) return fallback;
  try {
    return found->get<T>();
  } catch (const json::exception&) {
    throw Error(source + ": key '" + key + "' has an unexpected value " + found->dump());
  }
}

// numpy.linspace(start, stop, count): start + i * step, with the last element exactly `stop`.
std::vector<double> numpy_linspace(double start, double stop, int count) {
  std::vector<double> values(count);
  if (count == 1) {
    values[0] = start;
    return values;
  }
  const double step = (stop - start) / (count - 1);
  for (int i = 0; i < count; ++i) values[i] = i * step + start;
  values[count - 1] = stop;
  return values;
}

}  // namespace

FlowMatchEulerDiscreteConfig parse_flow_match_config(const json& config,
                                                     const std::string& source) {
  if (!config.is_object()) throw Error(source + ": expected a JSON object");
  const std::string class_name = value_or<std::string>(config, "_class_name", "", source);
  if (!class_name.empty() && class_name != "FlowMatchEulerDiscreteScheduler")
    throw Error(source + ": _class_name is '" + class_name +
                "', expected 'FlowMatchEulerDiscreteScheduler'");
  FlowMatchEulerDiscreteConfig parsed;
  parsed.num_train_timesteps =
      value_or<int>(config, "num_train_timesteps", parsed.num_train_timesteps, source);
  parsed.shift = value_or<double>(config, "shift", parsed.shift, source);
  parsed.use_dynamic_shifting =
      value_or<bool>(config, "use_dynamic_shifting", parsed.use_dynamic_shifting, source);
  parsed.base_shift = value_or<double>(config, "base_shift", parsed.base_shift, source);
  parsed.max_shift = value_or<double>(config, "max_shift", parsed.max_shift, source);
  parsed.base_image_seq_len =
      value_or<int>(config, "base_image_seq_len", parsed.base_image_seq_len, source);
  parsed.max_image_seq_len =
      value_or<int>(config, "max_image_seq_len", parsed.max_image_seq_len, source);
  parsed.shift_terminal = value_or<double>(config, "shift_terminal", 0.0, source);

  const std::string time_shift_type =
      value_or<std::string>(config, "time_shift_type", "exponential", source);
  if (time_shift_type != "exponential" && time_shift_type != "linear")
    throw Error(source + ": time_shift_type '" + time_shift_type + "' is not supported");
  parsed.exponential_time_shift = time_shift_type == "exponential";

  for (const char* option : {"use_karras_sigmas", "use_exponential_sigmas", "use_beta_sigmas",
                             "invert_sigmas", "stochastic_sampling"}) {
    if (value_or<bool>(config, option, false, source))
      throw Error(source + ": FlowMatchEulerDiscreteScheduler option '" + option +
                  "' is not supported yet");
  }
  if (parsed.num_train_timesteps <= 0)
    throw Error(source + ": key 'num_train_timesteps' must be positive");
  if (parsed.shift <= 0) throw Error(source + ": key 'shift' must be positive");
  if (parsed.shift_terminal < 0 || parsed.shift_terminal >= 1)
    throw Error(source + ": key 'shift_terminal' must be in [0, 1)");
  if (parsed.max_image_seq_len == parsed.base_image_seq_len)
    throw Error(source + ": base_image_seq_len and max_image_seq_len must differ");
  return parsed;
}

nlohmann::json flux_scheduler_config() {
  return {{"_class_name", "FlowMatchEulerDiscreteScheduler"},
          {"num_train_timesteps", 1000},
          {"shift", 3.0},
          {"use_dynamic_shifting", true},
          {"base_shift", 0.5},
          {"max_shift", 1.15},
          {"base_image_seq_len", 256},
          {"max_image_seq_len", 4096}};
}

double calculate_flux_shift(int image_seq_len, int base_seq_len, int max_seq_len, double base_shift,
                            double max_shift) {
  const double slope = (max_shift - base_shift) / (max_seq_len - base_seq_len);
  const double intercept = base_shift - slope * base_seq_len;
  return image_seq_len * slope + intercept;
}

FlowMatchEulerDiscreteScheduler::FlowMatchEulerDiscreteScheduler(
    FlowMatchEulerDiscreteConfig config)
    : config_(config) {}

double FlowMatchEulerDiscreteScheduler::dynamic_shift_mu(int image_seq_len) const {
  return calculate_flux_shift(image_seq_len, config_.base_image_seq_len, config_.max_image_seq_len,
                              config_.base_shift, config_.max_shift);
}

std::unique_ptr<Scheduler> FlowMatchEulerDiscreteScheduler::clone() const {
  // The schedule tensors are never modified in place, so sharing them is safe.
  return std::make_unique<FlowMatchEulerDiscreteScheduler>(*this);
}

double FlowMatchEulerDiscreteScheduler::apply_shift(double sigma, std::optional<double> mu) const {
  if (config_.use_dynamic_shifting) {
    // diffusers time_shift(mu, 1.0, t); exponent 1.0 leaves (1/t - 1) unchanged.
    const double scale = config_.exponential_time_shift ? std::exp(*mu) : *mu;
    return scale / (scale + (1.0 / sigma - 1.0));
  }
  return config_.shift * sigma / (1.0 + (config_.shift - 1.0) * sigma);
}

void FlowMatchEulerDiscreteScheduler::set_timesteps(int num_inference_steps,
                                                    std::optional<double> mu) {
  if (num_inference_steps < 1)
    throw Error("FlowMatchEulerDiscreteScheduler: num_inference_steps must be at least 1, got " +
                std::to_string(num_inference_steps));
  if (config_.use_dynamic_shifting) {
    // FluxPipeline passes sigmas = np.linspace(1.0, 1 / n, n).
    set_sigmas(numpy_linspace(1.0, 1.0 / num_inference_steps, num_inference_steps), mu);
    return;
  }
  // diffusers' default path interpolates between the training schedule's first and last sigmas,
  // which its constructor computed (already shifted) in float32.
  const float train_steps = static_cast<float>(config_.num_train_timesteps);
  const float shift = static_cast<float>(config_.shift);
  const float shift_minus_one = static_cast<float>(config_.shift - 1.0);
  auto shifted_float = [&](float sigma) {
    return shift * sigma / (1.0f + shift_minus_one * sigma);
  };
  const double sigma_max = shifted_float(1.0f);
  const double sigma_min = shifted_float(1.0f / train_steps);
  std::vector<double> sigmas =
      numpy_linspace(sigma_max * config_.num_train_timesteps,
                     sigma_min * config_.num_train_timesteps, num_inference_steps);
  for (double& sigma : sigmas) sigma /= config_.num_train_timesteps;
  build_schedule(sigmas, mu);
}

void FlowMatchEulerDiscreteScheduler::set_sigmas(const std::vector<double>& unshifted_sigmas,
                                                 std::optional<double> mu) {
  if (unshifted_sigmas.empty())
    throw Error("FlowMatchEulerDiscreteScheduler: set_sigmas needs at least one sigma");
  // diffusers converts custom sigmas to float32 before shifting them.
  std::vector<double> rounded;
  rounded.reserve(unshifted_sigmas.size());
  for (double sigma : unshifted_sigmas) {
    if (!(sigma > 0.0 && sigma <= 1.0))
      throw Error("FlowMatchEulerDiscreteScheduler: sigmas must be in (0, 1], got " +
                  std::to_string(sigma));
    rounded.push_back(static_cast<float>(sigma));
  }
  build_schedule(rounded, mu);
}

void FlowMatchEulerDiscreteScheduler::build_schedule(const std::vector<double>& unshifted_sigmas,
                                                     std::optional<double> mu) {
  if (config_.use_dynamic_shifting && !mu)
    throw Error(
        "FlowMatchEulerDiscreteScheduler: use_dynamic_shifting needs mu (see "
        "calculate_flux_shift)");
  std::vector<double> shifted;
  shifted.reserve(unshifted_sigmas.size());
  for (double sigma : unshifted_sigmas) shifted.push_back(apply_shift(sigma, mu));
  if (config_.shift_terminal > 0.0) {
    // stretch_shift_to_terminal: rescale 1 - sigma so the last sigma becomes shift_terminal.
    const double scale = (1.0 - shifted.back()) / (1.0 - config_.shift_terminal);
    for (double& sigma : shifted) sigma = 1.0 - (1.0 - sigma) / scale;
  }

  // Schedule computed in double, stored in float32 like diffusers; timesteps = sigma * 1000 in
  // float32 arithmetic, as diffusers multiplies the float32 tensor.
  std::vector<float> sigma_values;
  std::vector<float> timestep_values;
  const float train_steps = static_cast<float>(config_.num_train_timesteps);
  for (double sigma : shifted) {
    const float value = static_cast<float>(sigma);
    sigma_values.push_back(value);
    timestep_values.push_back(value * train_steps);
  }
  sigma_values.push_back(0.0f);
  timesteps_ = at::tensor(at::ArrayRef<float>(timestep_values), at::kFloat);
  sigmas_ = at::tensor(at::ArrayRef<float>(sigma_values), at::kFloat);
  sigma_values_ = std::move(sigma_values);
}

void FlowMatchEulerDiscreteScheduler::check_step_index(int step_index, int last_valid,
                                                       const char* operation) const {
  if (sigma_values_.empty())
    throw Error(std::string("FlowMatchEulerDiscreteScheduler.") + operation +
                ": set_timesteps was not called");
  if (step_index < 0 || step_index > last_valid)
    throw Error(std::string("FlowMatchEulerDiscreteScheduler.") + operation + ": step index " +
                std::to_string(step_index) + " is outside [0, " + std::to_string(last_valid) + "]");
}

at::Tensor FlowMatchEulerDiscreteScheduler::scale_model_input(const at::Tensor& sample,
                                                              int step_index) const {
  check_step_index(step_index, num_steps() - 1, "scale_model_input");
  return sample;
}

at::Tensor FlowMatchEulerDiscreteScheduler::step(const at::Tensor& model_output, int step_index,
                                                 const at::Tensor& sample,
                                                 SchedulerState& /*state: single-step*/) const {
  check_step_index(step_index, num_steps() - 1, "step");
  // The sigma difference is a float32 subtraction and the update runs in float32, as in diffusers.
  const float sigma_delta = sigma_values_[step_index + 1] - sigma_values_[step_index];
  at::Tensor next = at::add(sample.to(at::kFloat), model_output, sigma_delta);
  return next.to(model_output.scalar_type());
}

at::Tensor FlowMatchEulerDiscreteScheduler::add_noise(const at::Tensor& original,
                                                      const at::Tensor& noise,
                                                      int step_index) const {
  check_step_index(step_index, num_steps(), "add_noise");
  const float sigma = sigma_values_[step_index];
  const float keep = 1.0f - sigma;
  return at::add(noise * sigma, original, keep);
}

}  // namespace flashps
