// The noise-scheduler interface shared by the denoising pipelines (diffusers v0.32 semantics).
//
// Sharing model: set_timesteps() configures the schedule once; after that every method is const
// and addresses steps by explicit index, so one configured scheduler can serve many requests that
// are at different steps (continuous batching). Anything a multistep scheduler must remember
// between steps of one request (previous model outputs) lives in a SchedulerState that the
// request owns. Requests that need a different step count or shift use their own clone().
#pragma once
#include <ATen/Tensor.h>

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

namespace flashps {

// Per-request memory of a multistep scheduler; single-step schedulers use this empty base.
class SchedulerState {
 public:
  virtual ~SchedulerState() = default;
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;

  // diffusers class name, e.g. "FlowMatchEulerDiscreteScheduler".
  virtual std::string class_name() const = 0;
  virtual std::unique_ptr<Scheduler> clone() const = 0;

  // Builds the schedule for `num_inference_steps` steps. `mu` is the resolution-dependent shift
  // of schedulers with dynamic shifting (Flux); schedulers that need it throw Error without it.
  virtual void set_timesteps(int num_inference_steps, std::optional<double> mu = std::nullopt) = 0;

  // Number of model evaluations in the schedule (timesteps().size(0)); 0 before set_timesteps.
  virtual int num_steps() const = 0;
  // float32 [num_steps]: the value passed to the model at each step (not divided by anything).
  virtual const at::Tensor& timesteps() const = 0;
  // float32 [num_steps + 1] with the final sigma appended, or undefined for schedulers without
  // sigmas.
  virtual const at::Tensor& sigmas() const = 0;
  // Standard deviation of the initial noise: multiply unit Gaussian noise by this.
  virtual double init_noise_sigma() const = 0;

  virtual std::unique_ptr<SchedulerState> make_state() const {
    return std::make_unique<SchedulerState>();
  }
  // Scales the sample before the model sees it at `step_index` (identity for most schedulers).
  virtual at::Tensor scale_model_input(const at::Tensor& sample, int step_index) const = 0;
  // Advances `sample` from step `step_index` to the next one given the model's prediction.
  // The result has model_output's dtype; the update itself is computed in float32.
  virtual at::Tensor step(const at::Tensor& model_output, int step_index, const at::Tensor& sample,
                          SchedulerState& state) const = 0;
  // Noises a clean `original` to the noise level of step `step_index` (step_index == num_steps
  // means the end of the schedule). Inpainting uses it to re-noise the unmasked template.
  virtual at::Tensor add_noise(const at::Tensor& original, const at::Tensor& noise,
                               int step_index) const = 0;
};

// Builds a scheduler from a diffusers scheduler config (parsed scheduler_config.json), dispatching
// on "_class_name". Throws Error("<source_name>: ... is not supported yet") for other classes.
std::unique_ptr<Scheduler> make_scheduler(const nlohmann::json& config,
                                          const std::string& source_name);

// Reads `scheduler_config_json_path` and calls make_scheduler.
std::unique_ptr<Scheduler> load_scheduler(const std::string& scheduler_config_json_path);

}  // namespace flashps
