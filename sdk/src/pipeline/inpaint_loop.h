// The stepwise inpainting loop, written once for every family (pipeline/edit_job.h's phases):
//   start    the request's steps (default: the model's), the family's preparation, an empty mask
//            returns the template; the template's latents, the strength/first-step rule, noise
//            drawn on the host from the seed, the blend mask; template-cache lookup and replay;
//   step     the family's denoiser for the whole batch, with replay recovery (an unreadable
//            entry restarts that job in full, its batch-mates go on), the scheduler step, latent
//            blending for models without inpainting conditioning, progress and cancellation;
//   finish   the replay's stats, decoding and paste-back (pipeline/paste_back.h);
// and previews, work estimates, template registration and lookup around them.
//
// A family derives from it and supplies only what differs: preparation (images, mask,
// conditioning), its latent codec, the denoiser call of a batch, its blocks for replay, and its
// restrictions (e.g. no kv replay). Its job type derives from InpaintJob.
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/capture.h"
#include "engine/replay_session.h"
#include "pipeline/edit_job.h"
#include "pipeline/inpaint_job.h"
#include "pipeline/inpaint_model.h"
#include "schedulers/scheduler.h"

namespace flashps {

class InpaintLoop : public InpaintPipeline {
 public:
  // Stepwise editing for serving; thread-compatible: one thread steps a pipeline at a time,
  // start_edit/finish_edit may run on other threads meanwhile.
  std::unique_ptr<EditJob> start_edit(const EditRequest& request) override;
  void step(const std::vector<EditJob*>& jobs) override;
  EditResult finish_edit(EditJob& job) override;
  std::function<Image()> preview(const EditJob& job) const override;
  engine::RequestWork estimate_work(const EditRequest& request) const override;
  // Runs the template in full and captures what later edits replay, as far as the family
  // replays it (a family without kv replay captures block outputs only and refuses a request
  // for none). An empty mask is fine: later edits bring their own.
  TemplateInfo register_template(const EditRequest& request, bool capture_kv = true,
                                 bool capture_hidden = true) override;
  // Whether edit(request) would replay a registered template: prepares the request as far as its
  // capture id (image processing only, no model) and asks the store.
  bool has_template(const EditRequest& request) const override;
  engine::CaptureStore& store() override { return *store_; }
  // Whether edits copy fine detail from the surroundings unless a request says (texture_transfer).
  virtual bool recommends_texture_transfer() const { return false; }

 protected:
  explicit InpaintLoop(std::shared_ptr<engine::CaptureStore> store);
  engine::CaptureStore& capture_store() const { return *store_; }  // for const preparation

  // ---- what a family supplies ----
  // Errors name the family: "Flux pipeline: step() given a job of another pipeline".
  virtual std::string pipeline_name() const = 0;
  // The request (steps resolved) turned into a job: prepared image and mask, conditioning, token
  // counts. A family may skip the conditioning of an edit whose mask is empty (it returns the
  // template); `registering`: a template registration (no replay, the mask may be empty).
  virtual std::unique_ptr<InpaintJob> prepare_job(const EditRequest& request, bool registering) const = 0;
  // has_template's model-free part: the capture id and token mask edit(request) would look up.
  struct TemplateKey {
    engine::CaptureId id;
    engine::TokenMask mask;
  };
  virtual TemplateKey template_key(const EditRequest& request) const = 0;
  virtual engine::CaptureId capture_id(const InpaintJob& job) const = 0;
  // Latent codec. encode: the job's template_latents (when `template_latents`) in the family's
  // latent layout, and its conditioning latents (Fill, masked image); noise: host-drawn from
  // `generator` in that layout; blend_mask: the latent mask in it (on the device); decoder: latents
  // to a [3, H, W] image in [-1, 1], callable later on any thread (previews).
  virtual void encode(InpaintJob& job, bool template_latents) const = 0;
  virtual at::Tensor latent_noise(const InpaintJob& job, at::Generator& generator) const = 0;
  virtual at::Tensor latent_blend_mask(const InpaintJob& job) const = 0;
  virtual std::function<at::Tensor(const at::Tensor&)> latent_decoder(const InpaintJob& job) const = 0;
  // Whether unmasked latents are replaced by the re-noised template after each step (models
  // without inpainting conditioning: plain Flux, 4-channel UNets).
  virtual bool blends_latents() const = 0;
  // Pixels per model token (texture transfer's patch scale).
  virtual int64_t token_pixels() const = 0;
  // The model's scheduler, cloned per job.
  virtual const Scheduler& model_scheduler() const = 0;
  // Per-job denoiser inputs that stay the same over steps, once scheduled and attached.
  virtual void prepare_denoiser(InpaintJob& job) const {}
  // The denoiser for the batch at each job's next_step (routers are set; it may run again after
  // a replay recovery): per job, the prediction the scheduler steps with, in the latent layout.
  // Records the step's assembly time (last_step_assembly_*; the step began at step_started_).
  virtual std::vector<at::Tensor> denoise(const std::vector<InpaintJob*>& batch) = 0;
  // The family's blocks for replay (engine/replay_session.h) under `mask`.
  virtual engine::ReplayBlocks replay_blocks(const InpaintJob& job, const engine::TokenMask& mask) const = 0;
  // What the family cannot replay (why_no_kv) and what a token is called in notes.
  virtual void restrict_replay(engine::ReplaySettings& settings) const {}
  virtual at::ScalarType activation_dtype() const = 0;  // of recorded captures
  // estimate_work's image, masked and text tokens (steps and caching are the loop's).
  virtual void estimate_tokens(const EditRequest& request, engine::RequestWork& work) const = 0;

  std::chrono::steady_clock::time_point step_started_;
  double step_cpu_started_ = 0;

 private:
  InpaintJob& own(EditJob& job, const char* call) const;
  engine::ReplaySettings replay_settings_for(const EditRequest& request, int first_step, int end_step) const;
  // Encodes the template, then schedules: scheduler, first step, noise, latents, blend mask.
  void begin_denoising(InpaintJob& job) const;
  void schedule(InpaintJob& job) const;
  void attach_replay(InpaintJob& job);
  void restart_in_full(InpaintJob& job, const std::string& why) const;
  double full_step_flops(const InpaintJob& job) const;

  std::shared_ptr<engine::CaptureStore> store_;
};

}  // namespace flashps
