// Turning a Stable Diffusion edit request into tensors: images and masks at the processing size,
// prompt encoding and guidance rows, and the template's capture identity.
#include <ATen/ATen.h>

#include <sstream>

#include "core/files/content_hash.h"
#include "core/diagnostics/error.h"
#include "core/mask/mask_ops.h"
#include "core/runtime/thread_clock.h"
#include "pipeline/edit_rules.h"
#include "pipeline/image_tensors.h"
#include "pipeline/prepared_mask.h"
#include "pipeline/stable_diffusion/sd_edit_job.h"
#include "pipeline/stable_diffusion/sd_inpaint_pipeline.h"

namespace flashps {
namespace {

// Processing sizes are multiples of what the UNet divides (VAE factor x downsampling).
int round_down(int value, int64_t multiple) {
  return static_cast<int>(std::max<int64_t>(multiple, (value / multiple) * multiple));
}

}  // namespace

void SDInpaintPipeline::prepare_images(const EditRequest& given, SDEditJob& job) const {
  if (given.image.empty()) throw Error("edit request has no image");
  check_image(given.image, "template image");
  const int steps = steps_of(given);
  rules::check_resolved_steps(steps, given.strength);
  job.request = given;
  job.request.steps = steps;
  const EditRequest& request = job.request;
  EditStats& stats = job.stats_;
  PreparedImage& prepared = job.prepared;
  prepared.original = to_rgb(request.image);
  const int width = prepared.original.width, height = prepared.original.height;
  prepared.window_width = width;  // a UNet sees the whole image
  prepared.window_height = height;
  Image original_mask = edit_mask_at(request, width, height, stats.notes);
  if (request.conditioning.defined())
    stats.notes.push_back("Stable Diffusion folders encode text prompts: the prompt embeddings (" +
                          request.conditioning.source + ") are ignored");

  const int64_t multiple = size_multiple();
  prepared.width = round_down(width, multiple);
  prepared.height = round_down(height, multiple);
  prepared.resized = prepared.width != width || prepared.height != height;
  if (prepared.resized)
    stats.notes.push_back("processed at " + std::to_string(prepared.width) + "x" + std::to_string(prepared.height) +
                          " (this model needs sides in multiples of " + std::to_string(multiple) +
                          " pixels), result resized back");
  const Image processed =
      prepared.resized ? resize_bilinear(prepared.original, prepared.width, prepared.height) : prepared.original;
  const Image processed_mask =
      prepared.resized ? resize_nearest(original_mask, prepared.width, prepared.height) : original_mask;
  prepared.image = image_to_tensor(processed);
  const int64_t factor = components_.vae->scale_factor();
  rules::check_mask_reach(request.mask_grow_pixels, request.mask_feather_pixels, request.token_dilation, width,
                          height, static_cast<int>(prepared.width / factor), static_cast<int>(prepared.height / factor));
  // A UNet's tokens are latent pixels.
  prepared.mask = prepare_mask(std::move(original_mask), processed_mask, factor, factor, request.token_dilation);
  job.latent_mask = prepared.mask.latent.unsqueeze(0).unsqueeze(0).to(device());
  stats.width = prepared.width;
  stats.height = prepared.height;
  stats.mask_ratio = prepared.mask.ratio();
  ContentHasher hasher;
  hasher.update(std::to_string(processed.width) + "x" + std::to_string(processed.height));
  hasher.update(processed.pixels.data(), processed.pixels.size());
  prepared.template_hash = hasher.hex();
}

std::unique_ptr<InpaintJob> SDInpaintPipeline::prepare_job(const EditRequest& given, bool registering) const {
  at::NoGradGuard no_grad;
  auto job = std::make_unique<SDEditJob>();
  prepare_images(given, *job);
  const EditRequest& request = job->request;
  EditStats& stats = job->stats_;
  const int64_t latent_height = job->latent_mask.size(2), latent_width = job->latent_mask.size(3);
  if (job->prepared.mask.tokens.empty() && !registering) return job;  // returned unchanged: no text to encode
  // Text: [negative; positive] rows with guidance, as diffusers concatenates them.
  job->guidance = request.guidance_scale.value_or(components_.default_guidance);
  job->guided = job->guidance > 1.0;
  const EncodedPrompt positive = encode_prompt(components_.text, request.prompt);
  if (positive.truncated) stats.notes.push_back("prompt longer than 77 tokens: truncated (as diffusers does)");
  at::Tensor context = positive.embeds, pooled = positive.pooled;
  if (job->guided) {
    EncodedPrompt negative;
    if (request.negative_prompt.empty() && components_.force_zeros_for_empty_prompt) {
      negative.embeds = at::zeros_like(positive.embeds);
      if (positive.pooled.defined()) negative.pooled = at::zeros_like(positive.pooled);
    } else {
      negative = encode_prompt(components_.text, request.negative_prompt);
      if (negative.truncated) stats.notes.push_back("negative prompt longer than 77 tokens: truncated");
    }
    context = at::cat({negative.embeds, positive.embeds});
    if (pooled.defined()) pooled = at::cat({negative.pooled, positive.pooled});
  }
  job->context = context;
  if (components_.text.is_xl()) {
    job->text_embeds = pooled;
    // (original size, crop top-left, target size), all the processed size: no crop.
    const float height = float(job->prepared.height), width = float(job->prepared.width);
    const at::Tensor ids = at::tensor(std::vector<float>{height, width, 0.0f, 0.0f, height, width}).unsqueeze(0);
    job->time_ids = ids.expand({context.size(0), 6}).contiguous().to(device());
  }

  // Rows the UNet processes per step (both guidance rows); the prompt is cross-attention
  // context, not token rows.
  job->image_tokens_ = job->rows() * latent_height * latent_width;
  job->masked_tokens_ = job->rows() * job->prepared.mask.tokens.masked_count();
  job->text_tokens_ = 0;
  stats.mode_used = CacheMode::full;
  return job;
}

engine::CaptureId SDInpaintPipeline::capture_id(const InpaintJob& base_job) const {
  const auto& job = static_cast<const SDEditJob&>(base_job);
  const EditRequest& request = job.request;
  std::ostringstream config;
  config << job.prepared.width << "x" << job.prepared.height << " steps=" << request.steps
         << " strength=" << request.strength << " guidance=" << job.guidance << " unet=sd dtype=" << c10::toString(components_.unet->dtype())
         // Block numbering: transformer blocks and ResNets (output + moments), since tiled ResNets.
         << " blocks=transformers+resnets";
  return {job.prepared.template_hash, components_.fingerprint, config.str()};
}

}  // namespace flashps
