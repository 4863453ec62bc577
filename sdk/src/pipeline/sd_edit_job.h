// A Stable Diffusion edit in flight (internal to the SD pipeline): the prepared tensors, the
// request's own scheduler and noise, and the router that replays (edits of a registered
// template) or captures (registration) the UNet's transformer blocks.
#pragma once
#include <ATen/Tensor.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "engine/replay_session.h"
#include "engine/template_recording.h"
#include "pipeline/edit_job.h"
#include "pipeline/prepared_mask.h"
#include "schedulers/scheduler.h"

namespace flashps {

struct SDEditJob final : EditJob {
  using EditJob::image_tokens_;
  using EditJob::masked_tokens_;
  using EditJob::stats_;
  using EditJob::steps_done_;
  using EditJob::steps_total_;
  using EditJob::text_tokens_;

  EditRequest request;
  Image original;
  PreparedMask mask;  // every form of the edit's mask (pipeline/prepared_mask.h)
  bool unchanged = false, resized = false;
  int width = 0, height = 0;
  at::Tensor latent_mask;            // mask.latent as the UNet takes it: [1, 1, h, w]
  at::Tensor masked_image_latents;   // [1, C, h, w] (9-channel UNets)
  at::Tensor image_latents, noise;   // 4-channel UNets and strength < 1
  at::Tensor context, text_embeds, time_ids;  // [rows, 77, D], SDXL [rows, P], [rows, 6]
  bool guided = false;
  double guidance = 7.5;
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<SchedulerState> scheduler_state;
  int next_step = 0, end_step = 0;
  at::Tensor latents;  // [1, C, h, w]
  std::chrono::steady_clock::time_point started;

  // Mask-aware editing of a registered template: hidden replay of the transformer blocks.
  std::string template_hash;  // of the processed template image
  std::unique_ptr<engine::ReplaySession> replay;
  // Registration: records every transformer block's output.
  std::unique_ptr<engine::TemplateRecording> recording;

  int rows() const { return guided ? 2 : 1; }  // UNet batch rows (classifier-free guidance)
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
