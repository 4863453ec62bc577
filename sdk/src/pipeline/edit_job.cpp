#include "pipeline/edit_job.h"

#include <optional>

namespace flashps {

EditResult StepwisePipeline::run_alone(const EditRequest& request) {
  std::unique_ptr<EditJob> job = start_edit(request);
  while (!job->denoised()) step({job.get()});
  return finish_edit(*job);
}

engine::DeviceSpeed StepwisePipeline::planning_speed(engine::StepKind kind) const {
  return profile_speed_ ? *profile_speed_ : speed_estimator_.speed(kind);
}

void StepwisePipeline::use_profile_speed(const engine::DeviceSpeed& speed) { profile_speed_ = speed; }

void StepwisePipeline::observe_step(const std::vector<EditJob*>& jobs, double seconds) {
  double flops = 0;
  int blocks = 0;
  std::optional<engine::StepKind> kind;
  for (const EditJob* job : jobs) {
    if (job->step_flops <= 0 || job->step_blocks <= 0) return;  // a job that did not say what it ran
    flops += job->step_flops;
    blocks = std::max(blocks, job->step_blocks);  // a batch runs its blocks once
    kind = !kind || *kind == job->step_kind ? job->step_kind : engine::StepKind::any;
  }
  speed_estimator_.observe_compute(flops, blocks, seconds, kind.value_or(engine::StepKind::any));
}

}  // namespace flashps
