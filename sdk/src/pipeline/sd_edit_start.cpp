// Starting and finishing Stable Diffusion edits: preparation and template-cache lookup
// (pre-processing), decoding with paste-back (post-processing), and the estimates serving routes by.
#include <ATen/ATen.h>

#include <chrono>
#include <cmath>

#include "core/error.h"
#include "core/mask_ops.h"
#include "core/thread_clock.h"
#include "models/unet/unet_block_work.h"
#include "pipeline/edit_replay.h"
#include "pipeline/image_tensors.h"
#include "pipeline/prepared_mask.h"
#include "pipeline/sd_edit_job.h"
#include "pipeline/sd_inpaint_pipeline.h"

namespace flashps {
namespace {

// The UNet's side of the engine's replay settings: hidden replay only (dense ResNets need every
// row), on the pipeline's device.
engine::ReplaySettings sd_replay_settings(const EditRequest& request, const engine::DeviceSpeed& speed,
                                          at::Device device, int first_step, int end_step) {
  engine::ReplaySettings settings = replay_settings(request, speed, device, first_step, end_step);
  settings.why_no_kv = "cache mode 'kv' does not apply to UNet models (their ResNets are dense): use 'hidden' or 'auto'";
  settings.token_unit = "latent pixels";
  return settings;
}

}  // namespace

std::unique_ptr<EditJob> SDInpaintPipeline::start_edit(const EditRequest& request) {
  std::unique_ptr<SDEditJob> job = prepare_job(request, /*registering=*/false);
  if (!job->unchanged) attach_replay(*job);
  return job;
}

bool SDInpaintPipeline::has_template(const EditRequest& given) const {
  at::NoGradGuard no_grad;
  SDEditJob job;
  prepare_images(given, job);
  job.guidance = job.request.guidance_scale.value_or(components_.default_guidance);
  std::unique_ptr<Scheduler> scheduler = components_.scheduler->clone();
  scheduler->set_timesteps(job.request.steps);
  return engine::ReplaySession::would_replay(*store_, capture_id(job), job.mask.tokens,
                                             sd_replay_settings(job.request, planning_speed(engine::StepKind::hidden), device(), 0, scheduler->num_steps()));
}

void SDInpaintPipeline::attach_replay(SDEditJob& job) const {
  const engine::CaptureId id = capture_id(job);
  const UNetConfig& config = components_.unet->config();
  const std::vector<engine::BlockWork> work =
      unet_block_work(config, job.context.size(1), c10::elementSize(components_.unet->dtype()),
                      job.mask.tokens.grid_height);
  // Each transformer block sees its level's grid: the mask max-pooled to it, for both guidance rows.
  const auto describe_blocks = [&](const engine::TokenMask& mask) {
    engine::ReplayBlocks blocks;
    blocks.work = work;
    blocks.block_masks = unet_block_masks(config, mask, job.rows());
    for (const engine::TokenMask& block_mask : blocks.block_masks)
      blocks.counts.push_back({0, block_mask.token_count(), block_mask.masked_count()});
    return blocks;
  };
  job.replay = engine::ReplaySession::attach(
      *store_, id, job.mask.tokens, sd_replay_settings(job.request, planning_speed(engine::StepKind::hidden), device(), job.next_step, job.end_step),
      describe_blocks, job.stats_.notes);
  // The transformer blocks' FLOPs: the dense ResNets and samplers are in the fitted fixed cost.
  std::vector<engine::TokenCounts> all_tokens;
  for (const engine::TokenCounts& counts : describe_blocks(job.mask.tokens).counts)
    all_tokens.push_back({0, counts.image, counts.image});
  job.step_blocks = static_cast<int>(work.size());
  job.step_flops = job.replay ? job.replay->flops_per_step() : engine::forward_flops(work, all_tokens);
  job.step_kind = engine::step_kind_of(job.replay.get());
  job.masked_tokens_ = job.rows() * job.mask.tokens.masked_count();  // widened to the template's mask
  record_replay_start(job.stats_, job.replay.get(), id);
}

EditResult SDInpaintPipeline::finish_edit(EditJob& base_job) {
  auto* job = dynamic_cast<SDEditJob*>(&base_job);
  if (!job) throw Error("Stable Diffusion pipeline: finish_edit() given a job of another pipeline");
  if (job->failed()) std::rethrow_exception(job->error());
  EditResult result;
  EditStats& stats = job->stats_;
  if (job->unchanged) {
    result.image = restore_alpha(job->original, job->request.image, Image());
  } else {
    if (!job->denoised()) throw Error("Stable Diffusion pipeline: finish_edit() before the last denoising step");
    if (job->replay) {
      record_replay_finish(stats, *job->replay);
      const engine::ReplayStats loaded = job->replay->stats();
      observe_loads(double(loaded.bytes_loaded), loaded.reads, loaded.load_seconds);
      job->replay.reset();
    }
    at::NoGradGuard no_grad;
    const auto start = std::chrono::steady_clock::now();
    Image generated = tensor_to_image(components_.vae->decode_latents(job->latents)[0]);
    if (job->resized) generated = resize_bilinear(generated, job->original.width, job->original.height);
    Image alpha = job->mask.original;
    if (job->request.mask_grow_pixels > 0) alpha = grow_mask(alpha, job->request.mask_grow_pixels);
    if (job->request.mask_feather_pixels > 0) alpha = feather_mask(alpha, job->request.mask_feather_pixels);
    // The input's transparency is kept (opaque where regenerated); job->original is RGB.
    result.image = restore_alpha(composite(job->original, generated, alpha), job->request.image, alpha);
    stats.decode_seconds += seconds_since(start);
  }
  stats.total_seconds = seconds_since(job->started);
  result.stats = stats;
  return result;
}

engine::RequestWork SDInpaintPipeline::estimate_work(const EditRequest& request) const {
  engine::RequestWork work;
  work.steps = std::max(1, static_cast<int>(steps_of(request) * request.strength));
  const int64_t factor = components_.vae->scale_factor();
  const int64_t rows = request.guidance_scale.value_or(components_.default_guidance) > 1.0 ? 2 : 1;
  const int64_t latent_tokens = std::max<int64_t>(1, (request.image.width / factor) * (request.image.height / factor));
  const double ratio = requested_mask_ratio(request);
  work.image_tokens = rows * latent_tokens;
  work.masked_tokens = rows * std::min(latent_tokens, static_cast<int64_t>(std::ceil(ratio * double(latent_tokens))));
  work.text_tokens = 0;  // cross-attention context, not token rows
  work.cached = request.mode != CacheMode::full;  // known once started: the template may not be registered
  return work;
}

std::function<Image()> SDInpaintPipeline::preview(const EditJob& base_job) const {
  const auto* job = dynamic_cast<const SDEditJob*>(&base_job);
  if (!job) throw Error("Stable Diffusion pipeline: preview() given a job of another pipeline");
  if (job->unchanged || !job->latents.defined()) {
    Image original = job->original;
    return [original] { return original; };
  }
  at::Tensor latents = job->latents.clone();
  std::shared_ptr<ImageAutoencoder> vae = components_.vae;
  return [latents, vae] {
    at::NoGradGuard no_grad;
    return tensor_to_image(vae->decode_latents(latents)[0]);
  };
}

}  // namespace flashps
