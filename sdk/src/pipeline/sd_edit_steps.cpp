// One denoising step of a batch of Stable Diffusion edits: every job of a latent size in one UNet
// call, each with its own router (replay, registration, or none).
#include <ATen/ATen.h>

#include <chrono>
#include <map>

#include "core/error.h"
#include "core/thread_clock.h"
#include "pipeline/sd_edit_job.h"
#include "pipeline/sd_inpaint_pipeline.h"

namespace flashps {
void SDInpaintPipeline::step(const std::vector<EditJob*>& jobs) {
  at::NoGradGuard no_grad;
  std::vector<SDEditJob*> all;
  for (EditJob* job : jobs) {
    auto* sd = dynamic_cast<SDEditJob*>(job);
    if (!sd) throw Error("Stable Diffusion pipeline: step() given a job of another pipeline");
    if (sd->denoised()) throw Error("Stable Diffusion pipeline: step() given a job that has finished denoising");
    all.push_back(sd);
  }
  const auto step_start = std::chrono::steady_clock::now();
  // A UNet is dense: one call per latent size, every job of that size in it.
  std::map<std::pair<int64_t, int64_t>, std::vector<SDEditJob*>> groups;
  for (SDEditJob* job : all) groups[{job->latents.size(2), job->latents.size(3)}].push_back(job);
  for (auto& [size, group] : groups) {
    std::vector<at::Tensor> samples, timesteps, contexts, text_embeds, time_ids;
    unet::UNetRouting routing;
    bool routed = false;
    for (SDEditJob* job : group) {
      const int rows = job->rows();
      const int64_t first_row = routing.requests.empty() ? 0 : routing.requests.back().first_row + routing.requests.back().rows;
      routing.requests.push_back({first_row, rows, job->router()});
      job->set_router_step(job->next_step);
      routed = routed || job->router();
      at::Tensor input = job->scheduler->scale_model_input(job->latents, job->next_step);
      if (is_inpainting_unet()) input = at::cat({input, job->latent_mask, job->masked_image_latents}, 1);
      samples.push_back(input.expand({rows, -1, -1, -1}));
      timesteps.push_back(job->scheduler->timesteps()[job->next_step].to(job->latents.device(), at::kFloat).reshape({1}).expand({rows}));
      contexts.push_back(job->context);
      if (job->text_embeds.defined()) {
        text_embeds.push_back(job->text_embeds);
        time_ids.push_back(job->time_ids);
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
    last_step_assembly_seconds_ = seconds_since(step_start);
    const at::Tensor output = components_.unet->forward(inputs);
    int64_t row = 0;
    for (SDEditJob* job : group) {
      at::Tensor prediction;
      if (job->guided) {
        const at::Tensor unconditional = output.narrow(0, row, 1), conditional = output.narrow(0, row + 1, 1);
        prediction = unconditional + job->guidance * (conditional - unconditional);
        row += 2;
      } else {
        prediction = output.narrow(0, row++, 1);
      }
      const int step = job->next_step;
      job->latents = job->scheduler->step(prediction, step, job->latents, *job->scheduler_state);
      if (!is_inpainting_unet()) {  // latent blending: the template outside the mask
        const at::Tensor proper = step + 1 < job->end_step
                                      ? job->scheduler->add_noise(job->image_latents, job->noise, step + 1)
                                      : job->image_latents;
        job->latents = (1 - job->latent_mask) * proper + job->latent_mask * job->latents;
      }
    }
  }
  const double seconds = seconds_since(step_start);
  observe_step(jobs, seconds);
  for (SDEditJob* job : all) {
    ++job->next_step;
    ++job->steps_done_;
    ++job->stats_.steps_run;
    job->stats_.denoise_seconds += seconds;
    try {
      report_progress(job->request.progress, {"denoise", job->steps_done_, job->steps_total_, job->stats_.denoise_seconds});
    } catch (...) {
      job->fail(std::current_exception());
    }
  }
}

}  // namespace flashps
