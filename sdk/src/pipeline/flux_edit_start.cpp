// Starting and finishing Flux edits: preparation, template-cache lookup and replay planning
// (pre-processing), and decoding with paste-back (post-processing).
#include <ATen/ATen.h>

#include <chrono>
#include <cmath>

#include "core/error.h"
#include "core/mask_ops.h"
#include "core/thread_clock.h"
#include "models/flux/flux_block_work.h"
#include "pipeline/edit_replay.h"
#include "pipeline/flux_edit_job.h"
#include "pipeline/flux_packing.h"
#include "pipeline/image_tensors.h"
#include "pipeline/prepared_mask.h"
#include "pipeline/processing_window.h"

namespace flashps {

std::unique_ptr<EditJob> FluxInpaintPipeline::start_edit(const EditRequest& given) {
  auto job = std::make_unique<FluxEditJob>();
  job->started = std::chrono::steady_clock::now();
  job->request = given;
  job->request.steps = steps_of(given);
  const EditRequest& request = job->request;
  job->prepared = prepare(request, job->stats_);
  if (job->prepared.mask.tokens.empty()) {
    job->stats_.notes.push_back("mask is empty: the template is returned unchanged");
    job->unchanged = true;
    return job;
  }
  if (request.mode != CacheMode::full) use_whole_image_template(job->prepared, job->stats_, request);
  begin_denoising(*job);
  attach_replay(*job);
  if (is_fill()) update_fill_embedding(*job);  // here, off the step loop
  return job;
}

bool FluxInpaintPipeline::use_whole_image_template(Prepared& prepared, EditStats& stats,
                                                   const EditRequest& request) const {
  if (!prepared.windowed) return false;
  EditStats whole_stats;
  Prepared whole = prepare(request, whole_stats, /*whole_image=*/true);
  if (!store_->find(capture_id(whole, request))) return false;
  prepared = std::move(whole);
  stats.notes = whole_stats.notes;
  stats.width = whole_stats.width;
  stats.height = whole_stats.height;
  stats.mask_ratio = whole_stats.mask_ratio;
  return true;
}

bool FluxInpaintPipeline::has_template(const EditRequest& given) const {
  if (given.mode == CacheMode::full) return false;
  EditRequest request = given;
  request.steps = steps_of(given);
  request.progress = nullptr;
  EditStats stats;
  Prepared prepared = prepare(request, stats);
  use_whole_image_template(prepared, stats, request);
  return engine::ReplaySession::would_replay(*store_, capture_id(prepared, request), prepared.mask.tokens,
                                             replay_settings(request, planning_speed(engine::StepKind::hidden), device(), 0, request.steps));
}

void FluxInpaintPipeline::attach_replay(FluxEditJob& job) {
  const EditRequest& request = job.request;
  const engine::CaptureId id = capture_id(job.prepared, request);
  const std::vector<engine::BlockWork> work =
      flux_block_work(components_.transformer->config(), c10::elementSize(components_.transformer->dtype()));
  // Every block carries the same tokens: the text, and the image tokens of the edit's mask.
  const auto describe_blocks = [&](const engine::TokenMask& mask) {
    engine::ReplayBlocks blocks;
    blocks.work = work;
    blocks.counts.assign(work.size(), {job.text_tokens(), job.image_tokens(), mask.masked_count()});
    return blocks;
  };
  job.replay = engine::ReplaySession::attach(
      *store_, id, job.prepared.mask.tokens,
      replay_settings(request, planning_speed(engine::StepKind::hidden), device(), job.first_step, job.end_step), describe_blocks,
      job.stats_.notes);
  job.masked_tokens_ = job.prepared.mask.tokens.masked_count();  // widened to the template's mask
  job.step_blocks = static_cast<int>(work.size());
  job.step_flops = job.replay ? job.replay->flops_per_step()
                              : engine::forward_flops(work, {job.text_tokens(), job.image_tokens(), job.image_tokens()});
  job.step_kind = engine::step_kind_of(job.replay.get());
  record_replay_start(job.stats_, job.replay.get(), id);
}

EditResult FluxInpaintPipeline::finish_edit(EditJob& base_job) {
  auto* job = dynamic_cast<FluxEditJob*>(&base_job);
  if (!job) throw Error("Flux pipeline: finish_edit() given a job of another pipeline");
  if (job->failed()) std::rethrow_exception(job->error());
  EditResult result;
  EditStats& stats = job->stats_;
  if (job->unchanged) {
    result.image = restore_alpha(job->prepared.original, job->request.image, Image());
  } else {
    if (!job->denoised()) throw Error("Flux pipeline: finish_edit() before the last denoising step");
    if (job->replay) {
      record_replay_finish(stats, *job->replay);
      const engine::ReplayStats loaded = job->replay->stats();
      observe_loads(double(loaded.bytes_loaded), loaded.reads, loaded.load_seconds);
      job->replay.reset();
    }
    result.image = finish(job->prepared, job->request, job->latents, stats);
  }
  stats.total_seconds = seconds_since(job->started);
  result.stats = stats;
  return result;
}

}  // namespace flashps

namespace flashps {

engine::RequestWork FluxInpaintPipeline::estimate_work(const EditRequest& request) const {
  engine::RequestWork work;
  const int steps = steps_of(request);
  work.steps = std::max(1, std::min(steps, static_cast<int>(steps * request.strength)));
  const int width = std::max(1, request.image.width), height = std::max(1, request.image.height);
  const MaskCoverage coverage = mask_coverage(request.mask);  // one pass: ratio and extent
  const double ratio = coverage.ratio;
  const int64_t token_pixels = vae_scale_factor() * 2;
  const int context = request.context_size != 0 ? request.context_size : components_.native_size;
  // The region prepare() will process: its tokens, and the mask's share of it (all the mask's
  // pixels are inside a window around the mask).
  PixelBox box = coverage.box;
  if (!box.empty() && (request.mask.width != width || request.mask.height != height)) {  // to image pixels
    const double sx = double(width) / request.mask.width, sy = double(height) / request.mask.height;
    box = {int(box.x * sx), int(box.y * sy), std::max(1, int(std::ceil(box.w * sx))), std::max(1, int(std::ceil(box.h * sy)))};
  }
  const ProcessingWindow region = processing_window(width, height, box, context, /*whole_image=*/false);
  const double window_ratio =
      std::min(1.0, ratio * double(width) * double(height) / (double(region.width) * double(region.height)));
  work.image_tokens = std::max<int64_t>(1, int64_t(region.target_width / token_pixels) *
                                               int64_t(region.target_height / token_pixels));
  work.masked_tokens = std::min(work.image_tokens, static_cast<int64_t>(std::ceil(window_ratio * double(work.image_tokens))));
  const Conditioning& text = request.conditioning.defined() ? request.conditioning : components_.empty_prompt;
  work.text_tokens = text.defined() ? text.prompt_embeds.size(0) : 0;
  if (!request.conditioning.defined() && components_.text.present())
    work.text_tokens = request.max_sequence_length != 0 ? request.max_sequence_length
                                                        : components_.text.max_sequence_length;
  work.cached = request.mode != CacheMode::full;  // known once started: the template may not be registered
  return work;
}

}  // namespace flashps

namespace flashps {

std::function<Image()> FluxInpaintPipeline::preview(const EditJob& base_job) const {
  const auto* job = dynamic_cast<const FluxEditJob*>(&base_job);
  if (!job) throw Error("Flux pipeline: preview() given a job of another pipeline");
  if (job->unchanged || !job->latents.defined()) {
    Image original = job->prepared.original;
    return [original] { return original; };
  }
  // The processed window only (not pasted back): previews are small and frequent.
  at::Tensor latents = job->latents.clone();
  const int64_t height = job->prepared.latent_height, width = job->prepared.latent_width;
  std::shared_ptr<ImageAutoencoder> vae = components_.vae;
  return [latents, height, width, vae] {
    at::NoGradGuard no_grad;
    return tensor_to_image(vae->decode_latents(unpack_latents(latents, height, width).unsqueeze(0))[0]);
  };
}

}  // namespace flashps
