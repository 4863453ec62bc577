// The Flux side of denoising (pipeline/inpaint_loop.h runs the loop): the latent codec (packed
// 2x2 latent patches), the transformer's per-job inputs, and one transformer call that packs every
// job of the batch (FluxFillPipeline / FluxInpaintPipeline semantics).
#include <ATen/ATen.h>

#include <chrono>

#include "core/runtime/thread_clock.h"
#include "pipeline/flux/fill_conditioning.h"
#include "pipeline/flux/flux_edit_job.h"
#include "pipeline/flux/flux_packing.h"

namespace flashps {

void FluxInpaintPipeline::encode(InpaintJob& base_job, bool template_latents) const {
  auto& job = static_cast<FluxEditJob&>(base_job);
  const Prepared& prepared = job.prepared;
  const at::Device device = this->device();
  const at::Tensor image = prepared.image.to(device), pixel_mask = prepared.mask.pixels.to(device);
  if (template_latents) job.template_latents = pack_latents(components_.vae->encode_to_latents(image.unsqueeze(0))[0]);
  if (is_fill()) {
    job.fill_conditioning =
        flashps::fill_conditioning(*components_.vae, image, pixel_mask, components_.masked_image_fill).to(at::kFloat);
    job.fill_embedding.reset();
  }
}

at::Tensor FluxInpaintPipeline::latent_noise(const InpaintJob& base_job, at::Generator& generator) const {
  const Prepared& prepared = static_cast<const FluxEditJob&>(base_job).prepared;
  return pack_latents(
      at::randn({components_.vae->latent_channels(), prepared.latent_height, prepared.latent_width}, generator));
}

at::Tensor FluxInpaintPipeline::latent_blend_mask(const InpaintJob& base_job) const {
  // The latent-resolution mask, packed like the latents.
  const at::Tensor latent_mask = static_cast<const FluxEditJob&>(base_job).prepared.mask.latent.to(device());
  return pack_latents(latent_mask.unsqueeze(0).expand({components_.vae->latent_channels(), -1, -1}).contiguous());
}

std::function<at::Tensor(const at::Tensor&)> FluxInpaintPipeline::latent_decoder(const InpaintJob& base_job) const {
  const Prepared& prepared = static_cast<const FluxEditJob&>(base_job).prepared;
  const int64_t height = prepared.latent_height, width = prepared.latent_width;
  std::shared_ptr<ImageAutoencoder> vae = components_.vae;
  return [vae, height, width](const at::Tensor& latents) {
    return vae->decode_latents(unpack_latents(latents.to(at::kFloat), height, width).unsqueeze(0))[0];
  };
}

void FluxInpaintPipeline::prepare_denoiser(InpaintJob& base_job) const {
  auto& job = static_cast<FluxEditJob&>(base_job);
  const Prepared& prepared = job.prepared;
  const at::Tensor timesteps = job.scheduler->timesteps().to(at::kDouble).contiguous();
  job.model_timesteps.assign(timesteps.data_ptr<double>(), timesteps.data_ptr<double>() + timesteps.numel());
  for (double& timestep : job.model_timesteps) timestep /= 1000.0;
  const at::Device device = this->device();
  FluxRequest& inputs = job.model_inputs;
  inputs.encoder_hidden_states = prepared.prompt_embeds.to(device);
  inputs.pooled_projections = prepared.pooled_prompt_embeds.to(device);
  inputs.img_ids = flux_image_ids(prepared.latent_height, prepared.latent_width);
  inputs.txt_ids = at::zeros({prepared.prompt_embeds.size(0), 3});
  inputs.image_rope = std::make_shared<const RotaryTables>(components_.transformer->rotary_tables(inputs.img_ids));
  inputs.text_rope = std::make_shared<const RotaryTables>(components_.transformer->rotary_tables(inputs.txt_ids));
  if (components_.transformer->config().guidance_embeds)
    inputs.guidance = job.request.guidance_scale.value_or(components_.default_guidance);
  if (is_fill()) update_fill_embedding(job);  // off the step loop: only the carried rows
}

const at::Tensor& FluxInpaintPipeline::update_fill_embedding(FluxEditJob& job) const {
  return job.fill_embedding.get(*components_.transformer, job.fill_conditioning,
                                job.replay ? job.replay->router().carried_rows() : at::Tensor());
}

std::vector<at::Tensor> FluxInpaintPipeline::denoise(const std::vector<InpaintJob*>& batch) {
  const bool fill = is_fill();
  std::vector<FluxRequest> calls;
  calls.reserve(batch.size());
  for (InpaintJob* base_job : batch) {
    auto& job = static_cast<FluxEditJob&>(*base_job);
    FluxRequest call = job.model_inputs;
    call.hidden_states = job.latents;
    call.timestep = job.model_timesteps[job.next_step];
    call.router = job.router();
    if (job.replay) call.carried_rows = job.replay->router().carried_rows();
    if (fill) call.conditioning_embedding = update_fill_embedding(job);  // computed when the job started
    calls.push_back(std::move(call));
  }
  const double assembly_seconds = seconds_since(step_started_);
  const double assembly_cpu_seconds = thread_cpu_seconds() - step_cpu_started_;
  std::vector<at::Tensor> outputs = components_.transformer->forward(calls);
  // The model's packing of the batch's inputs is part of assembling the step.
  const auto packing = components_.transformer->last_input_packing();
  last_step_assembly_seconds_ = assembly_seconds + packing.seconds;
  last_step_assembly_cpu_seconds_ = assembly_cpu_seconds + packing.cpu_seconds;
  for (size_t i = 0; i < batch.size(); ++i) {
    outputs[i] = outputs[i].to(at::kFloat);
    if (components_.predicts_sample) {  // x0 -> flow velocity at this step's sigma
      const auto& job = static_cast<const FluxEditJob&>(*batch[i]);
      const double sigma = std::max(job.model_timesteps[job.next_step], 1e-6);
      outputs[i] = (job.latents - outputs[i]) / sigma;
    }
  }
  return outputs;
}

}  // namespace flashps
