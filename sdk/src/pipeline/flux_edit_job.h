// A Flux edit in flight (internal to the Flux pipeline): the prepared tensors, the request's
// own scheduler and noise, and the router that replays (edits) or captures (registration).
#pragma once
#include <ATen/Tensor.h>

#include <chrono>
#include <memory>
#include <vector>

#include "engine/replay_session.h"
#include "engine/template_recording.h"
#include "pipeline/edit_job.h"
#include "pipeline/flux_inpaint_prepare.h"
#include "schedulers/scheduler.h"

namespace flashps {

struct FluxEditJob final : EditJob {
  using EditJob::image_tokens_;
  using EditJob::masked_tokens_;
  using EditJob::stats_;
  using EditJob::steps_done_;
  using EditJob::steps_total_;
  using EditJob::text_tokens_;

  EditRequest request;
  FluxInpaintPipeline::Prepared prepared;
  bool unchanged = false;  // empty mask: finish returns the template

  std::unique_ptr<Scheduler> scheduler;  // configured for this request's steps and shift
  std::unique_ptr<SchedulerState> scheduler_state;
  int first_step = 0, end_step = 0, next_step = 0;
  std::vector<double> model_timesteps;  // per step, as the model takes it (sigma in [0, 1])
  at::Tensor latents, noise, template_latents, fill_conditioning, blend_mask;
  FluxRequest model_inputs;  // the inputs that stay the same over steps
  // The Fill conditioning's share of the model's input projection for the rows the model carries.
  ConditioningEmbeddingCache fill_embedding;

  // Edits of a registered template: replay of the capture's unmasked activations.
  std::unique_ptr<engine::ReplaySession> replay;
  // Registration: records every activation.
  std::unique_ptr<engine::TemplateRecording> recording;

  std::chrono::steady_clock::time_point started;
};

}  // namespace flashps
