// Starting edits and registrations in the shared loop: preparation through the family, the
// schedule (strength rule, noise, latents), and the template-cache lookup and replay.
#include <ATen/ATen.h>

#include <chrono>
#include <optional>

#include "core/diagnostics/error.h"
#include "core/runtime/thread_clock.h"
#include "pipeline/edit_replay.h"
#include "pipeline/inpaint_loop.h"
#include "schedulers/flow_match_euler_discrete.h"

namespace flashps {
namespace {

// Flow-matching schedules with dynamic shifting shift by the image's token count (Flux's mu).
std::unique_ptr<Scheduler> scheduled(const Scheduler& model_scheduler, int steps, int64_t image_tokens) {
  std::unique_ptr<Scheduler> scheduler = model_scheduler.clone();
  std::optional<double> mu;
  if (auto* flow = dynamic_cast<FlowMatchEulerDiscreteScheduler*>(scheduler.get()))
    if (flow->config().use_dynamic_shifting) mu = flow->dynamic_shift_mu(static_cast<int>(image_tokens));
  scheduler->set_timesteps(steps, mu);
  return scheduler;
}

}  // namespace

InpaintLoop::InpaintLoop(std::shared_ptr<engine::CaptureStore> store) : store_(std::move(store)) {
  if (!store_) store_ = std::make_shared<engine::MemoryCaptureStore>();
}

std::unique_ptr<EditJob> InpaintLoop::start_edit(const EditRequest& given) {
  const auto started = std::chrono::steady_clock::now();
  EditRequest request = given;
  request.steps = steps_of(given);
  std::unique_ptr<InpaintJob> job = prepare_job(request, /*registering=*/false);
  job->started = started;
  job->pipeline_type = &typeid(*this);
  if (job->prepared_image().mask.tokens.empty()) {
    job->stats_.notes.push_back("mask is empty: the template is returned unchanged");
    job->unchanged = true;
    return job;
  }
  begin_denoising(*job);
  attach_replay(*job);
  prepare_denoiser(*job);  // here, off the step loop
  return job;
}

TemplateInfo InpaintLoop::register_template(const EditRequest& given, bool capture_kv, bool capture_hidden) {
  engine::ReplaySettings restrictions;
  restrict_replay(restrictions);
  if (!restrictions.why_no_kv.empty()) {  // e.g. a UNet: dense ResNets need every row
    if (!capture_hidden)
      throw UnsupportedError(pipeline_name() + ": templates capture 'hidden' activations only (" +
                             restrictions.why_no_kv + "); set capture_hidden");
    capture_kv = false;
  }
  if (const std::string why = store_->why_unwritable(); !why.empty()) return skipped_registration(why);
  const auto started = std::chrono::steady_clock::now();
  EditRequest request = given;
  request.steps = steps_of(given);
  request.mode = CacheMode::full;
  std::unique_ptr<InpaintJob> job = prepare_job(request, /*registering=*/true);
  job->started = started;
  job->pipeline_type = &typeid(*this);
  const engine::CaptureId id = capture_id(*job);
  job->recording = std::make_unique<engine::TemplateRecording>(*store_, id, capture_kv, capture_hidden,
                                                               activation_dtype());
  begin_denoising(*job);
  prepare_denoiser(*job);
  while (!job->denoised()) {
    step({job.get()});
    if (job->failed()) std::rethrow_exception(job->error());
  }
  return registered_template(id, *job->recording->commit(job->prepared_image().mask.tokens), job->stats_, started);
}

bool InpaintLoop::has_template(const EditRequest& given) const {
  if (given.mode == CacheMode::full) return false;
  EditRequest request = given;
  request.steps = steps_of(given);
  request.progress = nullptr;
  const TemplateKey key = template_key(request);
  const int end_step = scheduled(model_scheduler(), request.steps, key.mask.token_count())->num_steps();
  return engine::ReplaySession::would_replay(*store_, key.id, key.mask, replay_settings_for(request, 0, end_step));
}

void InpaintLoop::begin_denoising(InpaintJob& job) const {
  at::NoGradGuard no_grad;
  const auto encode_start = std::chrono::steady_clock::now();
  encode(job, blends_latents() || job.request.strength < 1.0);
  job.stats_.encode_seconds += seconds_since(encode_start);
  schedule(job);
  if (blends_latents()) job.blend_mask = latent_blend_mask(job);
}

void InpaintLoop::schedule(InpaintJob& job) const {
  at::NoGradGuard no_grad;
  const EditRequest& request = job.request;
  job.scheduler = scheduled(model_scheduler(), request.steps, job.prepared_image().mask.tokens.token_count());
  job.scheduler_state = job.scheduler->make_state();
  job.end_step = job.scheduler->num_steps();
  // diffusers get_timesteps: strength s skips the first n - floor(n * s) steps (times the
  // solver's order: multistep schedules evaluate the model more often than n).
  const int init = std::min(static_cast<int>(request.steps * request.strength), request.steps);
  const int order = std::max(1, job.end_step / request.steps);
  job.first_step = job.next_step = std::max(request.steps - init, 0) * order;
  if (job.first_step >= job.end_step) throw Error("strength too low: no denoising step would run");
  job.steps_done_ = 0;
  job.steps_total_ = job.end_step - job.first_step;
  auto generator = at::detail::createCPUGenerator(request.seed);
  // Drawn on the host, so a seed gives the same noise on every device.
  job.noise = latent_noise(job, generator).to(device());
  job.latents = request.strength >= 1.0 ? job.noise * job.scheduler->init_noise_sigma()
                                        : job.scheduler->add_noise(job.template_latents, job.noise, job.first_step);
}

engine::ReplaySettings InpaintLoop::replay_settings_for(const EditRequest& request, int first_step,
                                                        int end_step) const {
  engine::ReplaySettings settings =
      replay_settings(request, planning_speed(engine::StepKind::hidden), device(), first_step, end_step);
  restrict_replay(settings);
  return settings;
}

double InpaintLoop::full_step_flops(const InpaintJob& job) const {
  const engine::ReplayBlocks blocks = replay_blocks(job, job.prepared_image().mask.tokens);
  return engine::forward_flops(blocks.work, blocks.counts);
}

void InpaintLoop::attach_replay(InpaintJob& job) {
  const engine::CaptureId id = capture_id(job);
  engine::TokenMask& mask = job.prepared_image().mask.tokens;
  job.replay = engine::ReplaySession::attach(
      *store_, id, mask, replay_settings_for(job.request, job.first_step, job.end_step),
      [&](const engine::TokenMask& widened) { return replay_blocks(job, widened); }, job.stats_.notes);
  job.masked_tokens_ = job.rows() * mask.masked_count();  // widened to the template's mask
  const engine::ReplayBlocks blocks = replay_blocks(job, mask);
  job.step_blocks = static_cast<int>(blocks.work.size());
  job.step_flops = job.replay ? job.replay->flops_per_step() : engine::forward_flops(blocks.work, blocks.counts);
  job.step_kind = engine::step_kind_of(job.replay.get());
  record_replay_start(job.stats_, job.replay.get(), id);
}

void InpaintLoop::restart_in_full(InpaintJob& job, const std::string& why) const {
  record_replay_dropped(job.stats_, why);
  job.replay.reset();
  job.stats_.steps_run = 0;
  schedule(job);  // from the first step again, with the same noise; the encoded template stays
  job.step_flops = full_step_flops(job);
  job.step_kind = engine::StepKind::full;
}

}  // namespace flashps
