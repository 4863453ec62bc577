// The Flux inpainting denoising loop (FluxFillPipeline / FluxInpaintPipeline semantics), one
// step at a time for a batch of jobs that may be at different steps.
#include <ATen/ATen.h>

#include <chrono>

#include "core/error.h"
#include "core/thread_clock.h"
#include "pipeline/fill_conditioning.h"
#include "pipeline/edit_replay.h"
#include "pipeline/flux_edit_job.h"
#include "models/flux/flux_block_work.h"
#include "pipeline/flux_packing.h"
#include "schedulers/flow_match_euler_discrete.h"

namespace flashps {
namespace {

// diffusers get_timesteps: strength s skips the first n - floor(n*s) steps.
int first_step(int steps, double strength) {
  const int init = std::min(static_cast<int>(steps * strength), steps);
  return std::max(steps - init, 0);
}

}  // namespace

void FluxInpaintPipeline::begin_denoising(FluxEditJob& job) const {
  at::NoGradGuard no_grad;
  const Prepared& prepared = job.prepared;
  const EditRequest& request = job.request;
  const bool fill = is_fill();
  const auto encode_start = std::chrono::steady_clock::now();
  const at::Device device = this->device();
  const at::Tensor image = prepared.image.to(device), pixel_mask = prepared.mask.pixels.to(device);
  if (!fill || request.strength < 1.0)
    job.template_latents = pack_latents(components_.vae->encode_to_latents(image.unsqueeze(0))[0]);
  if (fill) {
    job.fill_conditioning = flashps::fill_conditioning(*components_.vae, image, pixel_mask, components_.masked_image_fill).to(at::kFloat);
    job.fill_embedding.reset();
  }
  job.stats_.encode_seconds += seconds_since(encode_start);

  job.scheduler = components_.scheduler->clone();
  const int64_t tokens = prepared.mask.tokens.token_count();
  std::optional<double> mu;
  if (auto* flow = dynamic_cast<FlowMatchEulerDiscreteScheduler*>(job.scheduler.get()))
    if (flow->config().use_dynamic_shifting) mu = flow->dynamic_shift_mu(static_cast<int>(tokens));
  job.scheduler->set_timesteps(request.steps, mu);
  job.scheduler_state = job.scheduler->make_state();
  const at::Tensor timesteps = job.scheduler->timesteps().to(at::kDouble).contiguous();
  job.model_timesteps.assign(timesteps.data_ptr<double>(), timesteps.data_ptr<double>() + timesteps.numel());
  for (double& timestep : job.model_timesteps) timestep /= 1000.0;
  job.end_step = job.scheduler->num_steps();
  job.first_step = job.next_step = first_step(job.end_step, request.strength);
  if (job.first_step >= job.end_step) throw Error("strength too low: no denoising step would run");
  job.steps_done_ = 0;
  job.steps_total_ = job.end_step - job.first_step;

  const int64_t latent_channels = components_.vae->latent_channels();
  auto generator = at::detail::createCPUGenerator(request.seed);
  // Drawn on the host, so a seed gives the same noise on every device.
  job.noise =
      pack_latents(at::randn({latent_channels, prepared.latent_height, prepared.latent_width}, generator)).to(device);
  job.latents = job.first_step == 0 && request.strength >= 1.0
                    ? job.noise * job.scheduler->init_noise_sigma()
                    : job.scheduler->add_noise(job.template_latents, job.noise, job.first_step);
  if (!fill) {  // latent-resolution mask, packed like the latents, for per-step blending
    const at::Tensor latent_mask = prepared.mask.latent.to(device);
    job.blend_mask = pack_latents(latent_mask.unsqueeze(0).expand({latent_channels, -1, -1}).contiguous());
  }

  FluxRequest& inputs = job.model_inputs;
  inputs.encoder_hidden_states = prepared.prompt_embeds.to(device);
  inputs.pooled_projections = prepared.pooled_prompt_embeds.to(device);
  inputs.img_ids = flux_image_ids(prepared.latent_height, prepared.latent_width);
  inputs.txt_ids = at::zeros({prepared.prompt_embeds.size(0), 3});
  inputs.image_rope = std::make_shared<const RotaryTables>(components_.transformer->rotary_tables(inputs.img_ids));
  inputs.text_rope = std::make_shared<const RotaryTables>(components_.transformer->rotary_tables(inputs.txt_ids));
  if (components_.transformer->config().guidance_embeds)
    inputs.guidance = request.guidance_scale.value_or(components_.default_guidance);
  job.image_tokens_ = tokens;
  job.masked_tokens_ = prepared.mask.tokens.masked_count();
  job.text_tokens_ = prepared.prompt_embeds.size(0);
}

void FluxInpaintPipeline::restart_in_full(FluxEditJob& job, const std::string& why) const {
  record_replay_dropped(job.stats_, why);
  job.replay.reset();
  job.stats_.steps_run = 0;
  begin_denoising(job);  // from the first step again, with the same noise
  const auto work =
      flux_block_work(components_.transformer->config(), c10::elementSize(components_.transformer->dtype()));
  job.step_flops = engine::forward_flops(work, {job.text_tokens(), job.image_tokens(), job.image_tokens()});
  job.step_kind = engine::StepKind::full;
}

const at::Tensor& FluxInpaintPipeline::update_fill_embedding(FluxEditJob& job) const {
  return job.fill_embedding.get(*components_.transformer, job.fill_conditioning,
                                job.replay ? job.replay->router().carried_rows() : at::Tensor());
}

void FluxInpaintPipeline::step(const std::vector<EditJob*>& jobs) {
  at::NoGradGuard no_grad;
  std::vector<FluxEditJob*> batch;
  for (EditJob* job : jobs) {
    auto* flux_job = dynamic_cast<FluxEditJob*>(job);
    if (!flux_job) throw Error("Flux pipeline: step() given a job of another pipeline");
    if (flux_job->denoised()) throw Error("Flux pipeline: step() given a job that has finished denoising");
    batch.push_back(flux_job);
  }
  if (batch.empty()) return;
  const bool fill = is_fill();
  const auto step_start = std::chrono::steady_clock::now();
  const double step_cpu_start = thread_cpu_seconds();

  std::vector<at::Tensor> outputs;
  const auto call_model = [&] {
    std::vector<FluxRequest> calls;
    calls.reserve(batch.size());
    for (FluxEditJob* job : batch) {
      FluxRequest call = job->model_inputs;
      call.hidden_states = job->latents;
      call.timestep = job->model_timesteps[job->next_step];
      if (job->replay) {
        engine::ReplayRouter& router = job->replay->router();
        router.set_step(job->next_step);
        call.router = &router;
        call.carried_rows = router.carried_rows();
      } else if (job->recording) {
        job->recording->router().set_step(job->next_step);
        call.router = &job->recording->router();
      }
      if (fill) call.conditioning_embedding = update_fill_embedding(*job);  // computed when the job started
      calls.push_back(std::move(call));
    }
    const double assembly_seconds = seconds_since(step_start);
    const double assembly_cpu_seconds = thread_cpu_seconds() - step_cpu_start;
    outputs = components_.transformer->forward(calls);
    // The model's packing of the batch's inputs is part of assembling the step.
    const auto packing = components_.transformer->last_input_packing();
    last_step_assembly_seconds_ = assembly_seconds + packing.seconds;
    last_step_assembly_cpu_seconds_ = assembly_cpu_seconds + packing.cpu_seconds;
  };
  // An unreadable kv entry stops the packed call: its job restarts in full, and the step runs again.
  engine::call_with_replay_recovery(
      batch.size(), [&](size_t i) { return batch[i]->replay.get(); }, [&](size_t i) { return batch[i]->next_step; },
      call_model, [&](size_t i, const std::string& why) { restart_in_full(*batch[i], why); });

  const double step_seconds = seconds_since(step_start);
  observe_step(jobs, step_seconds);
  for (size_t i = 0; i < batch.size(); ++i) {
    FluxEditJob& job = *batch[i];
    const int step = job.next_step;
    at::Tensor output = outputs[i].to(at::kFloat);
    if (components_.predicts_sample) {  // x0 -> flow velocity at this step's sigma
      const double sigma = std::max(job.model_timesteps[step], 1e-6);
      output = (job.latents - output) / sigma;
    }
    job.latents = job.scheduler->step(output, step, job.latents, *job.scheduler_state).to(at::kFloat);
    if (!fill) {
      at::Tensor proper = step + 1 < job.end_step ? job.scheduler->add_noise(job.template_latents, job.noise, step + 1)
                                                  : job.template_latents;
      job.latents = (1 - job.blend_mask) * proper + job.blend_mask * job.latents;
    }
    ++job.next_step;
    ++job.steps_done_;
    ++job.stats_.steps_run;
    job.stats_.denoise_seconds += step_seconds;
    try {
      report_progress(job.request.progress,
                      {"denoise", job.steps_done_, job.steps_total_, job.stats_.denoise_seconds});
    } catch (...) {
      job.fail(std::current_exception());
      job.replay.reset();  // stops its loader now
    }
  }
}

}  // namespace flashps
