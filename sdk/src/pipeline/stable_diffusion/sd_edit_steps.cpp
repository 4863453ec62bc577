// The Stable Diffusion side of denoising (pipeline/inpaint_loop.h runs the loop): the latent codec
// ([1, C, h, w] latents of the VAE) and the UNet calls of a batch: every job of a latent size in
// one call, each with its own router (replay, registration, or none), classifier-free guidance
// combining its two rows.
#include <ATen/ATen.h>

#include <chrono>
#include <map>

#include "core/runtime/thread_clock.h"
#include "pipeline/stable_diffusion/sd_edit_job.h"
#include "pipeline/stable_diffusion/sd_inpaint_pipeline.h"

namespace flashps {

void SDInpaintPipeline::encode(InpaintJob& base_job, bool template_latents) const {
  auto& job = static_cast<SDEditJob&>(base_job);
  const at::Tensor image = job.prepared.image.unsqueeze(0).to(device());
  if (is_inpainting_unet()) {  // the masked image: masked pixels 0 (mid-grey), as diffusers
    const at::Tensor pixel_mask = job.prepared.mask.pixels.unsqueeze(0).unsqueeze(0).to(device());
    job.masked_image_latents = components_.vae->encode_to_latents(image * (pixel_mask < 0.5).to(at::kFloat));
  }
  if (template_latents) job.template_latents = components_.vae->encode_to_latents(image);
}

at::Tensor SDInpaintPipeline::latent_noise(const InpaintJob& base_job, at::Generator& generator) const {
  const auto& job = static_cast<const SDEditJob&>(base_job);
  return at::randn({1, components_.vae->latent_channels(), job.latent_mask.size(2), job.latent_mask.size(3)},
                   generator);
}

at::Tensor SDInpaintPipeline::latent_blend_mask(const InpaintJob& job) const {
  return static_cast<const SDEditJob&>(job).latent_mask;  // [1, 1, h, w] broadcasts over channels
}

std::function<at::Tensor(const at::Tensor&)> SDInpaintPipeline::latent_decoder(const InpaintJob&) const {
  std::shared_ptr<ImageAutoencoder> vae = components_.vae;
  return [vae](const at::Tensor& latents) { return vae->decode_latents(latents)[0]; };
}

std::vector<at::Tensor> SDInpaintPipeline::denoise(const std::vector<InpaintJob*>& batch) {
  std::vector<at::Tensor> predictions(batch.size());
  // A UNet is dense: one call per latent size, every job of that size in it.
  std::map<std::pair<int64_t, int64_t>, std::vector<size_t>> groups;
  for (size_t i = 0; i < batch.size(); ++i) groups[{batch[i]->latents.size(2), batch[i]->latents.size(3)}].push_back(i);
  for (auto& [size, members] : groups) {
    std::vector<at::Tensor> samples, timesteps, contexts, text_embeds, time_ids;
    unet::UNetRouting routing;
    bool routed = false;
    for (size_t i : members) {
      auto& job = static_cast<SDEditJob&>(*batch[i]);
      const int rows = job.rows();
      const int64_t first_row =
          routing.requests.empty() ? 0 : routing.requests.back().first_row + routing.requests.back().rows;
      routing.requests.push_back({first_row, rows, job.router()});
      routed = routed || job.router();
      at::Tensor input = job.scheduler->scale_model_input(job.latents, job.next_step);
      if (is_inpainting_unet()) input = at::cat({input, job.latent_mask, job.masked_image_latents}, 1);
      samples.push_back(input.expand({rows, -1, -1, -1}));
      timesteps.push_back(
          job.scheduler->timesteps()[job.next_step].to(job.latents.device(), at::kFloat).reshape({1}).expand({rows}));
      contexts.push_back(job.context);
      if (job.text_embeds.defined()) {
        text_embeds.push_back(job.text_embeds);
        time_ids.push_back(job.time_ids);
      }
    }
    UNetInputs inputs;
    inputs.sample = at::cat(samples);
    inputs.timestep = at::cat(timesteps);
    inputs.encoder_hidden_states = at::cat(contexts);
    if (!text_embeds.empty()) {
      inputs.text_embeds = at::cat(text_embeds);
      inputs.time_ids = at::cat(time_ids);
    }
    if (routed) inputs.routing = &routing;
    last_step_assembly_seconds_ = seconds_since(step_started_);
    last_step_assembly_cpu_seconds_ = thread_cpu_seconds() - step_cpu_started_;
    const at::Tensor output = components_.unet->forward(inputs);
    int64_t row = 0;
    for (size_t i : members) {
      const auto& job = static_cast<const SDEditJob&>(*batch[i]);
      if (job.guided) {
        const at::Tensor unconditional = output.narrow(0, row, 1), conditional = output.narrow(0, row + 1, 1);
        predictions[i] = unconditional + job.guidance * (conditional - unconditional);
        row += 2;
      } else {
        predictions[i] = output.narrow(0, row++, 1);
      }
    }
  }
  return predictions;
}

}  // namespace flashps
