// A Stable Diffusion edit in flight (internal to the SD pipeline): the prepared tensors, the
// request's own scheduler and noise, and the router that replays (edits of a registered
// template) or captures (registration) the UNet's transformer blocks.
#pragma once
#include <ATen/Tensor.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "engine/capture_router.h"
#include "engine/replay_router.h"
#include "engine/token_mask.h"
#include "pipeline/edit_job.h"
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
  Image original, original_mask;
  bool unchanged = false, resized = false;
  int width = 0, height = 0;
  at::Tensor latent_mask;            // [1, 1, h, w] in {0, 1}
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
  engine::TokenMask token_mask;  // latent grid
  std::shared_ptr<const engine::Capture> capture;
  std::vector<bool> use_cache;
  std::unique_ptr<engine::ReplayRouter> replay;
  // Registration: records every transformer block's output.
  std::unique_ptr<engine::CaptureWriter> capture_writer;
  std::unique_ptr<engine::CaptureRouter> capture_router;

  int rows() const { return guided ? 2 : 1; }  // UNet batch rows (classifier-free guidance)
  engine::TokenRouter* router() const {
    if (replay) return replay.get();
    return capture_router.get();
  }
  void set_router_step(int step) {
    if (replay) replay->set_step(step);
    if (capture_router) capture_router->set_step(step);
  }
};


}  // namespace flashps
