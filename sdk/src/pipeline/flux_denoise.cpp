// The Flux inpainting denoising loop (FluxFillPipeline / FluxInpaintPipeline semantics).
#include <ATen/ATen.h>

#include <chrono>

#include "core/error.h"
#include "pipeline/fill_conditioning.h"
#include "pipeline/flux_inpaint_prepare.h"
#include "pipeline/flux_packing.h"
#include "schedulers/flow_match_euler_discrete.h"

namespace flashps {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// diffusers get_timesteps: strength s skips the first n - floor(n*s) steps.
int first_step(int steps, double strength) {
  const int init = std::min(static_cast<int>(steps * strength), steps);
  return std::max(steps - init, 0);
}

}  // namespace

at::Tensor FluxInpaintPipeline::denoise(const Prepared& prepared, const EditRequest& request,
                                        const std::function<void(FluxRequest&, int)>& route,
                                        EditStats& stats) {
  at::NoGradGuard no_grad;
  const FluxTransformer& transformer = components_.transformer;
  const auto dtype = at::kFloat;  // activations; bf16 models use bf16 weights (core/linear.h)
  const int64_t vsf = vae_scale_factor();
  const bool fill = is_fill();
  const bool needs_template_latents = !fill || request.strength < 1.0;

  auto encode_start = std::chrono::steady_clock::now();
  at::Tensor template_latents;  // packed [L, 4C]
  if (needs_template_latents)
    template_latents = pack_latents(components_.vae->encode_to_latents(prepared.image.unsqueeze(0))[0]);
  at::Tensor fill_conditioning;
  if (fill) {
    fill_conditioning = flashps::fill_conditioning(*components_.vae, prepared.image, prepared.pixel_mask).to(dtype);
  }
  stats.encode_seconds += seconds_since(encode_start);

  std::unique_ptr<Scheduler> scheduler = components_.scheduler->clone();
  const int64_t tokens = prepared.token_mask.token_count();
  std::optional<double> mu;
  if (auto* flow = dynamic_cast<FlowMatchEulerDiscreteScheduler*>(scheduler.get()))
    if (flow->config().use_dynamic_shifting) mu = flow->dynamic_shift_mu(static_cast<int>(tokens));
  scheduler->set_timesteps(request.steps, mu);
  auto state = scheduler->make_state();
  const int steps = scheduler->num_steps();
  const int start = first_step(steps, request.strength);
  if (start >= steps) throw Error("strength too low: no denoising step would run");

  const int64_t latent_channels = components_.vae->latent_channels();
  auto generator = at::detail::createCPUGenerator(request.seed);
  at::Tensor noise = pack_latents(
      at::randn({latent_channels, prepared.latent_height, prepared.latent_width}, generator));
  at::Tensor latents = start == 0 && request.strength >= 1.0
                           ? noise * scheduler->init_noise_sigma()
                           : scheduler->add_noise(template_latents, noise, start);
  at::Tensor blend_mask;  // non-fill models: latent-resolution mask, packed like the latents
  if (!fill) {
    at::Tensor latent_mask = prepared.pixel_mask.slice(0, 0, {}, vsf).slice(1, 0, {}, vsf);
    blend_mask = pack_latents(latent_mask.unsqueeze(0).expand({latent_channels, -1, -1}).contiguous());
  }

  FluxRequest model_request;
  model_request.encoder_hidden_states = prepared.prompt_embeds;
  model_request.pooled_projections = prepared.pooled_prompt_embeds;
  model_request.img_ids = flux_image_ids(prepared.latent_height, prepared.latent_width);
  model_request.txt_ids = at::zeros({prepared.prompt_embeds.size(0), 3});
  if (transformer->config().guidance_embeds)
    model_request.guidance = request.guidance_scale.value_or(components_.default_guidance);

  const auto denoise_start = std::chrono::steady_clock::now();
  const at::Tensor& timesteps = scheduler->timesteps();
  for (int step = start; step < steps; ++step) {
    FluxRequest call = model_request;
    call.hidden_states = fill ? at::cat({latents.to(dtype), fill_conditioning}, 1) : latents.to(dtype);
    call.timestep = timesteps[step].item<double>() / 1000.0;
    if (route) route(call, step);
    at::Tensor output = transformer->forward({call})[0].to(at::kFloat);
    if (components_.predicts_sample)  // x0 -> flow velocity at this step's sigma
      output = (latents.to(at::kFloat) - output) / std::max(call.timestep, 1e-6);
    latents = scheduler->step(output.to(at::kFloat), step, latents, *state).to(at::kFloat);
    if (!fill) {
      at::Tensor proper = step + 1 < steps ? scheduler->add_noise(template_latents, noise, step + 1)
                                           : template_latents;
      latents = (1 - blend_mask) * proper + blend_mask * latents;
    }
    ++stats.steps_run;
    report_progress(request.progress, {"denoise", step - start + 1, steps - start, seconds_since(denoise_start)});
  }
  stats.denoise_seconds += seconds_since(denoise_start);
  return latents;
}

}  // namespace flashps
