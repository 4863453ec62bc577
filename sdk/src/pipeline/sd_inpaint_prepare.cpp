// Turning a Stable Diffusion edit request into tensors: images and masks at the processing size,
// prompt encoding, the masked image's latents, the request's scheduler and noise.
#include <ATen/ATen.h>

#include <chrono>
#include <sstream>

#include "core/content_hash.h"
#include "core/error.h"
#include "core/mask_ops.h"
#include "core/thread_clock.h"
#include "pipeline/edit_rules.h"
#include "pipeline/image_tensors.h"
#include "pipeline/prepared_mask.h"
#include "pipeline/sd_edit_job.h"
#include "pipeline/sd_inpaint_pipeline.h"

namespace flashps {
namespace {

// Processing sizes are multiples of what the UNet divides (VAE factor x downsampling).
int round_down(int value, int64_t multiple) {
  return static_cast<int>(std::max<int64_t>(multiple, (value / multiple) * multiple));
}

}  // namespace

std::pair<at::Tensor, at::Tensor> SDInpaintPipeline::prepare_images(const EditRequest& given, SDEditJob& job) const {
  if (given.image.empty()) throw Error("edit request has no image");
  check_image(given.image, "template image");
  const int steps = steps_of(given);
  rules::check_resolved_steps(steps, given.strength);
  job.request = given;
  job.request.steps = steps;
  const EditRequest& request = job.request;
  EditStats& stats = job.stats_;
  job.original = to_rgb(request.image);
  const int width = job.original.width, height = job.original.height;
  Image original_mask = edit_mask_at(request, width, height, stats.notes);
  if (request.conditioning.defined())
    stats.notes.push_back("Stable Diffusion folders encode text prompts: the prompt embeddings (" +
                          request.conditioning.source + ") are ignored");

  const int64_t multiple = size_multiple();
  job.width = round_down(width, multiple);
  job.height = round_down(height, multiple);
  job.resized = job.width != width || job.height != height;
  if (job.resized)
    stats.notes.push_back("processed at " + std::to_string(job.width) + "x" + std::to_string(job.height) +
                          " (this model needs sides in multiples of " + std::to_string(multiple) +
                          " pixels), result resized back");
  const Image processed = job.resized ? resize_bilinear(job.original, job.width, job.height) : job.original;
  const Image processed_mask = job.resized ? resize_nearest(original_mask, job.width, job.height) : original_mask;
  const at::Tensor image = image_to_tensor(processed).unsqueeze(0).to(device());
  const int64_t factor = components_.vae->scale_factor();
  rules::check_mask_reach(request.mask_grow_pixels, request.mask_feather_pixels, request.token_dilation, width,
                          height, static_cast<int>(job.width / factor), static_cast<int>(job.height / factor));
  // A UNet's tokens are latent pixels.
  job.mask = prepare_mask(std::move(original_mask), processed_mask, factor, factor, request.token_dilation);
  job.latent_mask = job.mask.latent.unsqueeze(0).unsqueeze(0).to(device());
  stats.width = job.width;
  stats.height = job.height;
  stats.mask_ratio = job.mask.ratio();
  ContentHasher hasher;
  hasher.update(std::to_string(processed.width) + "x" + std::to_string(processed.height));
  hasher.update(processed.pixels.data(), processed.pixels.size());
  job.template_hash = hasher.hex();
  return {image, job.mask.pixels.unsqueeze(0).unsqueeze(0).to(device())};
}

std::unique_ptr<SDEditJob> SDInpaintPipeline::prepare_job(const EditRequest& given, bool registering) const {
  at::NoGradGuard no_grad;
  auto job = std::make_unique<SDEditJob>();
  job->started = std::chrono::steady_clock::now();
  const auto [image, pixel_mask] = prepare_images(given, *job);
  const EditRequest& request = job->request;
  EditStats& stats = job->stats_;
  const int64_t latent_height = job->latent_mask.size(2), latent_width = job->latent_mask.size(3);
  if (job->mask.tokens.empty() && !registering) {
    stats.notes.push_back("mask is empty: the template is returned unchanged");
    job->unchanged = true;
    return job;
  }

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
    const at::Tensor ids = at::tensor(std::vector<float>{float(job->height), float(job->width), 0.0f, 0.0f,
                                                         float(job->height), float(job->width)})
                               .unsqueeze(0);
    job->time_ids = ids.expand({context.size(0), 6}).contiguous().to(device());
  }

  const auto encode_start = std::chrono::steady_clock::now();
  if (is_inpainting_unet())
    job->masked_image_latents = components_.vae->encode_to_latents(image * (pixel_mask < 0.5).to(at::kFloat));
  if (!is_inpainting_unet() || request.strength < 1.0) job->image_latents = components_.vae->encode_to_latents(image);
  stats.encode_seconds += seconds_since(encode_start);

  job->scheduler = components_.scheduler->clone();
  job->scheduler->set_timesteps(request.steps);
  job->scheduler_state = job->scheduler->make_state();
  job->end_step = job->scheduler->num_steps();
  // diffusers get_timesteps: skip the first n - floor(n * strength) (times the solver order).
  const int init = std::min(static_cast<int>(request.steps * request.strength), request.steps);
  const int order = std::max(1, job->end_step / request.steps);
  job->next_step = std::max(request.steps - init, 0) * order;
  if (job->next_step >= job->end_step) throw Error("strength too low: no denoising step would run");
  auto generator = at::detail::createCPUGenerator(request.seed);
  // Drawn on the host, so a seed gives the same noise on every device.
  job->noise = at::randn({1, components_.vae->latent_channels(), latent_height, latent_width}, generator).to(device());
  job->latents = request.strength >= 1.0 ? job->noise * job->scheduler->init_noise_sigma()
                                         : job->scheduler->add_noise(job->image_latents, job->noise, job->next_step);
  job->steps_total_ = job->end_step - job->next_step;
  // Rows the UNet processes per step (both guidance rows); the prompt is cross-attention
  // context, not token rows.
  job->image_tokens_ = job->rows() * latent_height * latent_width;
  job->masked_tokens_ = job->rows() * job->mask.tokens.masked_count();
  job->text_tokens_ = 0;
  stats.mode_used = CacheMode::full;
  return job;
}

engine::CaptureId SDInpaintPipeline::capture_id(const SDEditJob& job) const {
  const EditRequest& request = job.request;
  std::ostringstream config;
  config << job.width << "x" << job.height << " steps=" << request.steps << " strength=" << request.strength
         << " guidance=" << job.guidance << " unet=sd dtype=" << c10::toString(components_.unet->dtype())
         // Block numbering: transformer blocks and ResNets (output + moments), since tiled ResNets.
         << " blocks=transformers+resnets";
  return {job.template_hash, components_.fingerprint, config.str()};
}

}  // namespace flashps
