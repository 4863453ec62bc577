// Starting and finishing Flux edits: preparation, template-cache lookup and replay planning
// (pre-processing), and decoding with paste-back (post-processing).
#include <ATen/ATen.h>

#include <chrono>
#include <cmath>

#include "core/error.h"
#include "core/mask_ops.h"
#include "engine/template_mask.h"
#include "models/flux/flux_block_work.h"
#include "pipeline/flux_edit_job.h"
#include "pipeline/flux_packing.h"
#include "pipeline/image_tensors.h"

namespace flashps {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The activations an edit replays from `capture`: kv unless the request asks for hidden, or
// (automatic) the capture has no kv.
engine::CacheKind replay_kind(const engine::Capture& capture, const EditRequest& request) {
  const bool has_kv = capture.contains({request.steps - 1, 0, engine::Slot::keys});
  if (request.mode == ComputeMode::hidden || (request.mode == ComputeMode::automatic && !has_kv))
    return engine::CacheKind::hidden;
  return engine::CacheKind::kv;
}

bool capture_holds(const engine::Capture& capture, const EditRequest& request, engine::CacheKind kind) {
  const engine::Slot slot = kind == engine::CacheKind::kv ? engine::Slot::keys : engine::Slot::hidden;
  return capture.contains({request.steps - 1, 0, slot});
}

}  // namespace

std::unique_ptr<EditJob> FluxInpaintPipeline::start_edit(const EditRequest& given) {
  auto job = std::make_unique<FluxEditJob>();
  job->started = std::chrono::steady_clock::now();
  job->request = given;
  job->request.steps = steps_of(given);
  const EditRequest& request = job->request;
  job->prepared = prepare(request, job->stats_);
  if (job->prepared.token_mask.empty()) {
    job->stats_.notes.push_back("mask is empty: the template is returned unchanged");
    job->unchanged = true;
    return job;
  }
  if (request.mode != ComputeMode::full) use_whole_image_template(job->prepared, job->stats_, request);
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
  if (given.mode == ComputeMode::full) return false;
  EditRequest request = given;
  request.steps = steps_of(given);
  request.progress = nullptr;
  EditStats stats;
  Prepared prepared = prepare(request, stats);
  use_whole_image_template(prepared, stats, request);
  // As start_edit and attach_replay decide: nothing to replay for an empty or a full mask.
  if (prepared.token_mask.empty() || prepared.token_mask.full()) return false;
  const std::shared_ptr<const engine::Capture> capture = store_->find(capture_id(prepared, request));
  return capture && capture_holds(*capture, request, replay_kind(*capture, request));
}

void FluxInpaintPipeline::attach_replay(FluxEditJob& job) {
  const EditRequest& request = job.request;
  EditStats& stats = job.stats_;
  stats.mode_used = ComputeMode::full;
  if (request.mode == ComputeMode::full || job.prepared.token_mask.full()) return;
  const engine::CaptureId id = capture_id(job.prepared, request);
  std::shared_ptr<const engine::Capture> capture = store_->find(id);
  if (!capture) {
    stats.notes.push_back("template not registered for these settings: computed in full");
    return;
  }
  const engine::CacheKind kind = replay_kind(*capture, request);
  if (!capture_holds(*capture, request, kind)) {
    stats.notes.push_back(std::string("template capture has no '") + engine::cache_kind_name(kind) +
                          "' activations: computed in full");
    return;
  }

  // Tokens the template run regenerated hold no reusable activations: computed as well.
  std::optional<engine::TokenMask> compute_mask =
      engine::replay_compute_mask_noted(*capture, job.prepared.token_mask, "tokens", stats.notes);
  if (!compute_mask) return;
  if (compute_mask->masked_count() > job.prepared.token_mask.masked_count()) {
    job.prepared.token_mask = std::move(*compute_mask);
    job.masked_tokens_ = job.prepared.token_mask.masked_count();
  }

  const FluxConfig& config = components_.transformer->config();
  const auto work = flux_block_work(config, c10::elementSize(components_.transformer->dtype()));
  const engine::TokenCounts counts{job.text_tokens(), job.image_tokens(), job.masked_tokens()};
  std::vector<bool> use_cache(config.block_count(), true);
  if (kind == engine::CacheKind::hidden && request.use_planner) {
    engine::DeviceSpeed speed = speed_;
    if (capture->expected_load_bytes_per_second() > 0)
      speed.load_bytes_per_second = capture->expected_load_bytes_per_second();  // host or disk tier
    use_cache = engine::plan_pipeline(engine::estimate_block_times(work, counts, kind, speed)).use_cache;
  }
  std::vector<int> steps;
  for (int step = job.first_step; step < job.end_step; ++step) steps.push_back(step);
  // The router's loader starts reading at once: a queued request prefetches its cache.
  job.replay = std::make_unique<engine::ReplayRouter>(capture, job.prepared.token_mask, kind, use_cache, steps,
                                                      components_.transformer->proj_out->weight.device());
  job.capture = std::move(capture);
  job.kind = kind;
  job.use_cache = std::move(use_cache);
  stats.cache_hit = true;
  stats.template_hash = id.template_hash;
  stats.mode_used = kind == engine::CacheKind::kv ? ComputeMode::kv : ComputeMode::hidden;
  stats.compute_saving = engine::forward_flops(work, counts) / engine::forward_flops(work, counts, kind);
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
      const engine::ReplayStats& replay = job->replay->stats();
      const engine::ReplayStats& earlier = job->earlier_replay;
      stats.blocks_from_cache = replay.blocks_from_cache + earlier.blocks_from_cache;
      stats.blocks_computed = replay.blocks_computed + earlier.blocks_computed;
      stats.entries_failed = replay.entries_failed + earlier.entries_failed;
      stats.cache_bytes_loaded = replay.bytes_loaded + earlier.bytes_loaded;
      stats.load_wait_seconds = replay.load_wait_seconds + earlier.load_wait_seconds;
      if (stats.entries_failed)
        stats.notes.push_back(std::to_string(stats.entries_failed) +
                              " cached entries were unreadable and computed instead (" +
                              (replay.first_error.empty() ? earlier.first_error : replay.first_error) + ")");
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
  const double ratio = mask_ratio(request.mask);  // the same rule as the edit's (mask_values)
  const int64_t token_pixels = vae_scale_factor() * 2;
  const int context = request.context_size != 0 ? request.context_size : components_.native_size;
  double processed_width = width, processed_height = height, window_ratio = ratio;
  if (context > 0 && (width > context || height > context)) {  // a window about the context size
    processed_width = std::min(width, context);
    processed_height = std::min(height, context);
    window_ratio = std::min(1.0, ratio * double(width) * double(height) / (processed_width * processed_height));
  }
  work.image_tokens = std::max<int64_t>(1, int64_t(processed_width / token_pixels) * int64_t(processed_height / token_pixels));
  work.masked_tokens = std::min(work.image_tokens, static_cast<int64_t>(std::ceil(window_ratio * double(work.image_tokens))));
  const Conditioning& text = request.conditioning.defined() ? request.conditioning : components_.empty_prompt;
  work.text_tokens = text.defined() ? text.prompt_embeds.size(0) : 0;
  work.cached = request.mode != ComputeMode::full;  // known once started: the template may not be registered
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
