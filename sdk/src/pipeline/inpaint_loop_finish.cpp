// Finishing edits in the shared loop (the replay's stats, decoding, paste-back), previews of
// jobs in flight, and the work estimate serving routes by before an edit starts.
#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>

#include "core/diagnostics/error.h"
#include "core/mask/mask_ops.h"
#include "core/runtime/thread_clock.h"
#include "pipeline/edit_replay.h"
#include "pipeline/image_tensors.h"
#include "pipeline/inpaint_loop.h"
#include "pipeline/paste_back.h"

namespace flashps {

EditResult InpaintLoop::finish_edit(EditJob& base_job) {
  InpaintJob& job = own(base_job, "finish_edit()");
  if (job.failed()) std::rethrow_exception(job.error());
  EditResult result;
  EditStats& stats = job.stats_;
  const PreparedImage& prepared = job.prepared_image();
  if (job.unchanged) {
    result.image = restore_alpha(prepared.original, job.request.image, Image());
  } else {
    if (!job.denoised()) throw Error(pipeline_name() + ": finish_edit() before the last denoising step");
    if (job.replay) {
      record_replay_finish(stats, *job.replay);
      const engine::ReplayStats loaded = job.replay->stats();
      observe_loads(double(loaded.bytes_loaded), loaded.reads, loaded.load_seconds);
      job.replay.reset();
    }
    at::NoGradGuard no_grad;
    const auto start = std::chrono::steady_clock::now();
    PasteBackOptions options;
    options.texture_transfer = job.request.texture_transfer.value_or(recommends_texture_transfer());
    options.token_pixels = token_pixels();
    result.image = paste_back(tensor_to_image(latent_decoder(job)(job.latents)), prepared, job.request, options);
    stats.decode_seconds += seconds_since(start);
  }
  stats.total_seconds = seconds_since(job.started);
  result.stats = stats;
  return result;
}

std::function<Image()> InpaintLoop::preview(const EditJob& base_job) const {
  const InpaintJob& job = own(const_cast<EditJob&>(base_job), "preview()");
  if (job.unchanged || !job.latents.defined()) {
    Image original = job.prepared_image().original;
    return [original] { return original; };
  }
  // The processed window only (not pasted back): previews are small and frequent.
  at::Tensor latents = job.latents.clone();
  std::function<at::Tensor(const at::Tensor&)> decode = latent_decoder(job);
  return [latents, decode] {
    at::NoGradGuard no_grad;
    return tensor_to_image(decode(latents));
  };
}

engine::RequestWork InpaintLoop::estimate_work(const EditRequest& request) const {
  engine::RequestWork work;
  const int steps = steps_of(request);
  work.steps = std::max(1, std::min(steps, static_cast<int>(steps * request.strength)));
  estimate_tokens(request, work);
  work.cached = request.mode != CacheMode::full;  // known once started: the template may not be registered
  return work;
}

}  // namespace flashps
