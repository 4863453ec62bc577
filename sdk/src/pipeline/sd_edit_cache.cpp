// Mask-aware Stable Diffusion edits: template registration (capture of every UNet transformer
// block's output), and replay planning for edits of a registered template.
#include <ATen/ATen.h>

#include <chrono>
#include <sstream>

#include "core/error.h"
#include "engine/planner.h"
#include "engine/template_mask.h"
#include "models/unet/unet_block_work.h"
#include "pipeline/sd_edit_job.h"
#include "pipeline/sd_inpaint_pipeline.h"

namespace flashps {

engine::CaptureId SDInpaintPipeline::capture_id(const SDEditJob& job) const {
  const EditRequest& request = job.request;
  std::ostringstream config;
  config << job.width << "x" << job.height << " steps=" << request.steps << " strength=" << request.strength
         << " guidance=" << job.guidance << " unet=sd dtype=" << c10::toString(components_.unet->dtype());
  return {job.template_hash, components_.fingerprint, config.str()};
}

void SDInpaintPipeline::attach_replay(SDEditJob& job) const {
  const EditRequest& request = job.request;
  EditStats& stats = job.stats_;
  stats.mode_used = ComputeMode::full;
  if (request.mode == ComputeMode::full || job.token_mask.full()) return;
  if (request.mode == ComputeMode::kv)
    throw UnsupportedError(
        "cache kind 'kv' does not apply to UNet models (their ResNets are dense): use 'hidden' or 'auto'");
  const engine::CaptureId id = capture_id(job);
  std::shared_ptr<const engine::Capture> capture = store_->find(id);
  if (!capture) {
    stats.notes.push_back("template not registered for these settings: computed in full");
    return;
  }
  const int last_step = job.end_step - 1;
  if (!capture->contains({last_step, 0, engine::Slot::hidden})) {
    stats.notes.push_back("template capture has no 'hidden' activations: computed in full");
    return;
  }
  // Tokens the template run regenerated hold no reusable activations: computed as well.
  std::optional<engine::TokenMask> compute_mask =
      engine::replay_compute_mask_noted(*capture, job.token_mask, "latent pixels", stats.notes);
  if (!compute_mask) return;
  if (compute_mask->masked_count() > job.token_mask.masked_count()) {
    job.token_mask = std::move(*compute_mask);
    job.masked_tokens_ = job.rows() * job.token_mask.masked_count();
  }
  const UNetConfig& config = components_.unet->config();
  const std::vector<engine::TokenMask> masks = unet_block_masks(config, job.token_mask, job.rows());
  const auto work = unet_block_work(config, job.context.size(1), c10::elementSize(components_.unet->dtype()));
  std::vector<engine::TokenCounts> counts;
  for (const engine::TokenMask& mask : masks) counts.push_back({0, mask.token_count(), mask.masked_count()});
  std::vector<bool> use_cache(masks.size(), true);
  if (request.use_planner) {
    engine::DeviceSpeed speed = speed_;
    if (capture->expected_load_bytes_per_second() > 0)
      speed.load_bytes_per_second = capture->expected_load_bytes_per_second();
    use_cache = engine::plan_pipeline(engine::estimate_block_times(work, counts, engine::CacheKind::hidden, speed)).use_cache;
  }
  std::vector<int> steps;
  for (int step = job.next_step; step < job.end_step; ++step) steps.push_back(step);
  // The loader starts reading at once: a queued request prefetches its cache.
  job.replay = std::make_unique<engine::ReplayRouter>(capture, masks, use_cache, steps, at::Device(at::kCPU));
  job.capture = std::move(capture);
  job.use_cache = std::move(use_cache);
  stats.cache_hit = true;
  stats.template_hash = id.template_hash;
  stats.mode_used = ComputeMode::hidden;
  stats.compute_saving =
      engine::forward_flops(work, counts) / engine::forward_flops(work, counts, engine::CacheKind::hidden);
}

TemplateInfo SDInpaintPipeline::register_template(const EditRequest& request) {
  if (const std::string why = store_->why_unwritable(); !why.empty()) return skipped_registration(why);
  const auto start = std::chrono::steady_clock::now();
  EditRequest full = request;
  full.mode = ComputeMode::full;
  std::unique_ptr<SDEditJob> job = prepare_job(full, /*registering=*/true);
  const engine::CaptureId id = capture_id(*job);
  job->capture_writer = store_->begin(id);
  job->capture_router = std::make_unique<engine::CaptureRouter>(*job->capture_writer, /*capture_kv=*/false,
                                                                /*capture_hidden=*/true, components_.unet->dtype());
  while (!job->denoised()) {
    step({job.get()});
    if (job->failed()) std::rethrow_exception(job->error());
  }
  engine::put_template_mask(*job->capture_writer, job->token_mask);
  auto capture = job->capture_writer->commit();
  TemplateInfo info;
  info.stats = job->stats();
  info.template_hash = id.template_hash;
  info.stats.template_hash = id.template_hash;
  info.config = id.config;
  info.bytes = capture->bytes();
  info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  info.stats.total_seconds = info.seconds;
  return info;
}

}  // namespace flashps
