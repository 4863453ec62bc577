// An inpainting edit in flight, the state the shared loop (pipeline/inpaint_loop.h) runs for every
// family: the request, its prepared image and mask, its own scheduler, noise and latents, and the
// router that replays (edits of a registered template) or records (registration). A family's job
// derives from it and adds its conditioning (text, Fill latents) and model inputs.
#pragma once
#include <ATen/Tensor.h>

#include <chrono>
#include <memory>
#include <typeinfo>

#include "engine/replay_session.h"
#include "engine/template_recording.h"
#include "pipeline/edit_job.h"
#include "pipeline/prepared_image.h"
#include "schedulers/scheduler.h"

namespace flashps {

struct InpaintJob : EditJob {
  using EditJob::image_tokens_;
  using EditJob::masked_tokens_;
  using EditJob::stats_;
  using EditJob::steps_done_;
  using EditJob::steps_total_;
  using EditJob::text_tokens_;

  EditRequest request;   // steps resolved
  bool unchanged = false;  // empty mask: finishing returns the template
  const std::type_info* pipeline_type = nullptr;  // the family that started it (jobs do not cross)

  std::unique_ptr<Scheduler> scheduler;  // configured for this request's steps (and shift)
  std::unique_ptr<SchedulerState> scheduler_state;
  int first_step = 0, next_step = 0, end_step = 0;  // absolute steps [first_step, end_step)
  // In the family's latent layout (Flux: packed tokens; SD: [1, C, h, w]). template_latents:
  // the template's own, for latent blending and strength < 1; blend_mask: 1 = regenerate.
  at::Tensor latents, noise, template_latents, blend_mask;

  std::unique_ptr<engine::ReplaySession> replay;        // edits of a registered template
  std::unique_ptr<engine::TemplateRecording> recording;  // registration
  std::chrono::steady_clock::time_point started;

  virtual PreparedImage& prepared_image() = 0;
  const PreparedImage& prepared_image() const { return const_cast<InpaintJob*>(this)->prepared_image(); }
  // Model batch rows per step (2 under classifier-free guidance): token counts scale with it.
  virtual int rows() const { return 1; }

  engine::TokenRouter* router() const {
    if (replay) return &replay->router();
    return recording ? &recording->router() : nullptr;
  }
  void set_router_step(int step) {
    if (replay) replay->router().set_step(step);
    if (recording) recording->router().set_step(step);
  }
};

}  // namespace flashps
