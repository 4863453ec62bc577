// One denoising step of a batch in the shared loop: the family's denoiser for every job at once
// (jobs may be at different steps, sizes and strengths), then per job the scheduler step, latent
// blending, progress and cancellation.
#include <ATen/ATen.h>

#include <chrono>

#include "core/diagnostics/error.h"
#include "core/runtime/thread_clock.h"
#include "pipeline/inpaint_loop.h"

namespace flashps {

InpaintJob& InpaintLoop::own(EditJob& job, const char* call) const {
  auto* inpaint = dynamic_cast<InpaintJob*>(&job);
  if (!inpaint || !inpaint->pipeline_type || *inpaint->pipeline_type != typeid(*this))
    throw Error(pipeline_name() + ": " + call + " given a job of another pipeline");
  return *inpaint;
}

void InpaintLoop::step(const std::vector<EditJob*>& jobs) {
  at::NoGradGuard no_grad;
  std::vector<InpaintJob*> batch;
  for (EditJob* job : jobs) {
    InpaintJob& inpaint = own(*job, "step()");
    if (inpaint.denoised()) throw Error(pipeline_name() + ": step() given a job that has finished denoising");
    batch.push_back(&inpaint);
  }
  if (batch.empty()) return;
  step_started_ = std::chrono::steady_clock::now();
  step_cpu_started_ = thread_cpu_seconds();

  std::vector<at::Tensor> predictions;
  // An unreadable kv entry stops the call: its job restarts in full, the others reload from
  // their step, and the call runs again (reading the routers afresh).
  engine::call_with_replay_recovery(
      batch.size(), [&](size_t i) { return batch[i]->replay.get(); }, [&](size_t i) { return batch[i]->next_step; },
      [&] {
        for (InpaintJob* job : batch) job->set_router_step(job->next_step);
        predictions = denoise(batch);
      },
      [&](size_t i, const std::string& why) { restart_in_full(*batch[i], why); });

  const double step_seconds = seconds_since(step_started_);
  observe_step(jobs, step_seconds);
  const bool blend = blends_latents();
  for (size_t i = 0; i < batch.size(); ++i) {
    InpaintJob& job = *batch[i];
    const int step = job.next_step;
    job.latents = job.scheduler->step(predictions[i], step, job.latents, *job.scheduler_state).to(at::kFloat);
    if (blend) {  // the template outside the mask, re-noised to the next step's level
      const at::Tensor proper = step + 1 < job.end_step
                                    ? job.scheduler->add_noise(job.template_latents, job.noise, step + 1)
                                    : job.template_latents;
      job.latents = (1 - job.blend_mask) * proper + job.blend_mask * job.latents;
    }
    ++job.next_step;
    ++job.steps_done_;
    ++job.stats_.steps_run;
    job.stats_.denoise_seconds += step_seconds;
    try {
      report_progress(job.request.progress, {"denoise", job.steps_done_, job.steps_total_, job.stats_.denoise_seconds});
    } catch (...) {  // failed or cancelled: the batch-mates go on
      job.fail(std::current_exception());
      job.replay.reset();  // stops its loader now
    }
  }
}

}  // namespace flashps
