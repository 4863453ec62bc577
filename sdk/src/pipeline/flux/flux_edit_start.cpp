// The Flux side of starting an edit (pipeline/inpaint_loop.h runs the phases): the prepared job,
// the switch to a template registered whole, the blocks a replay plans over, and the work
// estimate at submission.
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "core/diagnostics/error.h"
#include "core/mask/mask_ops.h"
#include "models/flux/flux_block_work.h"
#include "pipeline/flux/flux_edit_job.h"
#include "pipeline/flux/processing_window.h"

namespace flashps {

std::unique_ptr<InpaintJob> FluxInpaintPipeline::prepare_job(const EditRequest& request, bool registering) const {
  auto job = std::make_unique<FluxEditJob>();
  job->request = request;
  job->prepared = prepare(request, job->stats_);
  const Prepared& prepared = job->prepared;
  if (!registering && !prepared.mask.tokens.empty() && request.mode != CacheMode::full)
    use_whole_image_template(job->prepared, job->stats_, request);
  job->image_tokens_ = prepared.mask.tokens.token_count();
  job->masked_tokens_ = prepared.mask.tokens.masked_count();
  job->text_tokens_ = prepared.prompt_embeds.size(0);
  return job;
}

bool FluxInpaintPipeline::use_whole_image_template(Prepared& prepared, EditStats& stats,
                                                   const EditRequest& request) const {
  if (!prepared.windowed) return false;
  EditStats whole_stats;
  Prepared whole = prepare(request, whole_stats, /*whole_image=*/true);
  if (!capture_store().find(capture_id(whole, request))) return false;
  prepared = std::move(whole);
  stats.notes = whole_stats.notes;
  stats.width = whole_stats.width;
  stats.height = whole_stats.height;
  stats.mask_ratio = whole_stats.mask_ratio;
  return true;
}

InpaintLoop::TemplateKey FluxInpaintPipeline::template_key(const EditRequest& request) const {
  EditStats stats;
  Prepared prepared = prepare(request, stats);
  use_whole_image_template(prepared, stats, request);
  return {capture_id(prepared, request), prepared.mask.tokens};
}

engine::CaptureId FluxInpaintPipeline::capture_id(const InpaintJob& job) const {
  return capture_id(static_cast<const FluxEditJob&>(job).prepared, job.request);
}

engine::ReplayBlocks FluxInpaintPipeline::replay_blocks(const InpaintJob& job, const engine::TokenMask& mask) const {
  // Every block carries the same tokens: the text, and the image tokens of the edit's mask.
  engine::ReplayBlocks blocks;
  blocks.work = flux_block_work(components_.transformer->config(), c10::elementSize(components_.transformer->dtype()));
  blocks.counts.assign(blocks.work.size(), {job.text_tokens(), job.image_tokens(), mask.masked_count()});
  return blocks;
}

void FluxInpaintPipeline::estimate_tokens(const EditRequest& request, engine::RequestWork& work) const {
  const int width = std::max(1, request.image.width), height = std::max(1, request.image.height);
  const MaskCoverage coverage = mask_coverage(request.mask);  // one pass: ratio and extent
  const double ratio = coverage.ratio;
  const int64_t token_pixels = this->token_pixels();
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
}

}  // namespace flashps
