// One edit in flight, split into the three phases a server schedules separately (FlashPS §4.3):
//   start_edit()  pre-processing: image/mask preparation, VAE encode, template-cache lookup,
//                 pipeline plan, cache prefetch; CPU work that must not stall the step loop;
//   step()        one denoising step for a whole running batch, packed into one model call;
//                 jobs may be at different steps, with different masks, sizes and strengths;
//   finish_edit() post-processing: VAE decode, paste back.
// edit() of a pipeline is exactly start, steps alone, finish: a request run in a batch gives the
// image it gives alone.
#pragma once
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "engine/capture.h"
#include "engine/cost_model.h"
#include "engine/speed_estimator.h"
#include "engine/request_work.h"
#include "pipeline/edit_types.h"

namespace flashps {

// A pipeline's cost as a serving device needs it before anything is measured: the engine's view
// of its blocks, the activations it replays, and the work of a typical request at the model's
// native size. The pipeline derives it from its model; serving never reads model configs.
struct PipelineCostProfile {
  std::string family;                      // e.g. "Flux transformer", "Stable Diffusion UNet"
  std::vector<engine::BlockWork> blocks;   // execution order
  engine::CacheMode cache_mode = engine::CacheMode::kv;
  engine::DeviceSpeed speed;               // the pipeline's device speed model
  int64_t image_tokens = 0, text_tokens = 0;  // token rows per step of a native-size request
  int steps = 0;                           // denoising steps of a typical request
};

class EditJob {
 public:
  virtual ~EditJob() = default;

  int steps_done() const { return steps_done_; }
  int steps_total() const { return steps_total_; }  // denoising steps this job runs
  bool denoised() const { return steps_done_ >= steps_total_ || failed(); }
  // Set when the job failed or was cancelled (its progress callback returned false) during a
  // batched step; the other jobs of the batch are unaffected.
  bool failed() const { return static_cast<bool>(error_); }
  std::exception_ptr error() const { return error_; }
  void fail(std::exception_ptr error) { error_ = std::move(error); }

  // The job's work per step, for cost models and schedulers.
  int64_t image_tokens() const { return image_tokens_; }
  int64_t masked_tokens() const { return masked_tokens_; }
  int64_t text_tokens() const { return text_tokens_; }
  engine::RequestWork work() const {
    engine::RequestWork work;
    work.steps = steps_total_;
    work.image_tokens = image_tokens_;
    work.masked_tokens = masked_tokens_;
    work.text_tokens = text_tokens_;
    work.cached = stats_.cache_hit;
    return work;
  }
  const EditStats& stats() const { return stats_; }
  EditStats& stats() { return stats_; }

  // One denoising step's block FLOPs as planned (a replay: its plan's blocks) and its number of
  // blocks: what the pipeline's online speed estimate divides a measured step by.
  double step_flops = 0;
  int step_blocks = 0;
  engine::StepKind step_kind = engine::StepKind::full;  // full, or the replay's cache mode

 protected:
  int steps_done_ = 0, steps_total_ = 0;
  int64_t image_tokens_ = 0, masked_tokens_ = 0, text_tokens_ = 0;
  EditStats stats_;
  std::exception_ptr error_;
};

class StepwisePipeline {
 public:
  virtual ~StepwisePipeline() = default;
  virtual std::unique_ptr<EditJob> start_edit(const EditRequest& request) = 0;
  // Runs the next denoising step of every job (each must be !denoised()). Per-job failures and
  // cancellations are recorded on the job; an error of the batch as a whole is thrown.
  virtual void step(const std::vector<EditJob*>& jobs) = 0;
  virtual EditResult finish_edit(EditJob& job) = 0;
  // A quick estimate of a request's work before start_edit (for routing at submission): no
  // image processing beyond counting mask pixels and finding their bounding box.
  virtual engine::RequestWork estimate_work(const EditRequest& request) const = 0;
  // A snapshot of a job's current state that decodes into a preview image when called (on any
  // thread, later): the step loop only copies the latents; the decode runs elsewhere.
  virtual std::function<Image()> preview(const EditJob& job) const = 0;
  virtual PipelineCostProfile cost_profile() const = 0;
  // The speed the planner plans with: the device profile's when one was given (`flashps
  // profile`), else an online estimate every step and every replay's loads update
  // (engine/speed_estimator.h), starting from conservative defaults; `kind`: the steps it plans
  // (the estimate's drift is kept per kind).
  engine::DeviceSpeed planning_speed(engine::StepKind kind = engine::StepKind::any) const;
  void use_profile_speed(const engine::DeviceSpeed& speed);
  bool speed_from_profile() const { return profile_speed_.has_value(); }
  // Seconds the last step() spent assembling the batch's inputs before the model call.
  double last_step_assembly_seconds() const { return last_step_assembly_seconds_; }
  double last_step_assembly_cpu_seconds() const { return last_step_assembly_cpu_seconds_; }  // thread CPU time

  // start_edit, step alone until denoised, finish_edit; rethrows a job's error.
  EditResult run_alone(const EditRequest& request);

  // Denoising steps of a request that names none (steps = 0): model_index.json's
  // "_flashps_default_steps" when the folder has one (a model distilled or trained for few
  // steps), else 28.
  int recommended_steps() const { return recommended_steps_; }
  int steps_of(const EditRequest& request) const { return request.steps == 0 ? recommended_steps_ : request.steps; }

 protected:
  // One step of `jobs` took `seconds` (their step_flops and step_blocks say what ran).
  void observe_step(const std::vector<EditJob*>& jobs, double seconds);
  void observe_loads(double bytes, int reads, double seconds) { speed_estimator_.observe_load(bytes, reads, seconds); }

  int recommended_steps_ = 28;
  double last_step_assembly_seconds_ = 0, last_step_assembly_cpu_seconds_ = 0;

 private:
  engine::SpeedEstimator speed_estimator_;
  std::optional<engine::DeviceSpeed> profile_speed_;
};

}  // namespace flashps
