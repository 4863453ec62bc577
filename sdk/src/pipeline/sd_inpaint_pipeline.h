// Inpainting with a Stable Diffusion folder (diffusers layout: model_index.json, unet/, vae/,
// text_encoder/ (+ text_encoder_2/ for SDXL), tokenizer/ (+ tokenizer_2/), scheduler/), the way
// diffusers' StableDiffusion(XL)InpaintPipeline does it:
//   9-channel UNets  the mask (binarised at 0.5, nearest to latent size) and the latents of the
//                    masked image are concatenated to the latents in that order, every step;
//   4-channel UNets  after every step the unmasked latents are replaced by the template's,
//                    re-noised to the next timestep (latent blending);
//   strength s       starts at step n - floor(n*s), from the re-noised template when s < 1;
//   guidance g > 1   classifier-free guidance with the negative prompt ("" by default; SDXL
//                    uses zeros for an empty negative prompt, force_zeros_for_empty_prompt).
// Differences, on purpose: the masked image is encoded with the posterior mean, not a sample
// (deterministic for a seed, independent of the noise generator), and unmasked pixels are pasted
// back from the original. Images are processed at sides rounded down to what the UNet divides.
// Stepwise (pipeline/edit_job.h): the serving engine batches SD jobs of equal size into one
// UNet call.
//
// Mask-aware editing: register_template() runs the template in full and captures the output of
// every UNet transformer block; edits of the same template (same size, steps, strength,
// guidance) then run self-attention queries, cross-attention and feed-forwards for the masked
// tokens only (token masks per UNet level, max-pooled from the latent grid) and take the other
// rows from the capture (`hidden` replay; ResNets stay dense, so `kv` replay does not apply).
// The planner decides per block whether loading its cached rows pays.
#pragma once
#include <memory>
#include <string>
#include <utility>

#include "engine/capture.h"
#include "engine/cost_model.h"
#include "models/unet/unet_model.h"
#include "models/vae/image_autoencoder.h"
#include "pipeline/edit_job.h"
#include "pipeline/inpaint_model.h"
#include "pipeline/sd_text_encoding.h"
#include "schedulers/scheduler.h"

namespace flashps {

struct SDEditJob;

struct SDPipelineComponents {
  UNet2DConditionModel unet{nullptr};
  std::shared_ptr<ImageAutoencoder> vae;
  SDTextEncoders text;
  std::shared_ptr<const Scheduler> scheduler;  // each job runs a clone
  std::string model_dir;
  std::string fingerprint;  // hash of configs and weight headers (activation-cache identity)
  bool force_zeros_for_empty_prompt = false;
  double default_guidance = 7.5;
  int default_steps = 28;  // denoising steps of a request that names none
};

class SDInpaintPipeline final : public InpaintPipeline {
 public:
  // Loads a diffusers folder onto `device` (its models, latents and cache replays live there;
  // noise is drawn on the host, so a seed gives the same noise on every device); Error names the
  // folder and the missing or unsupported component. `store` keeps template captures (default:
  // in memory).
  static std::unique_ptr<SDInpaintPipeline> load(const std::string& model_dir, at::ScalarType dtype,
                                                 std::shared_ptr<engine::CaptureStore> store = nullptr,
                                                 at::Device device = at::Device(at::kCPU));
  explicit SDInpaintPipeline(SDPipelineComponents components, std::shared_ptr<engine::CaptureStore> store = nullptr);
  ~SDInpaintPipeline();

  std::unique_ptr<EditJob> start_edit(const EditRequest& request) override;
  void step(const std::vector<EditJob*>& jobs) override;
  EditResult finish_edit(EditJob& job) override;
  engine::RequestWork estimate_work(const EditRequest& request) const override;
  std::function<Image()> preview(const EditJob& job) const override;
  PipelineCostProfile cost_profile() const override;
  // Runs the template in full and captures every transformer block's output (an empty mask is
  // fine: later edits bring their own). UNets replay block outputs only: capture_hidden must be set.
  TemplateInfo register_template(const EditRequest& request, bool capture_kv = false,
                                 bool capture_hidden = true) override;
  // Whether edit(request) would replay a registered template: prepares the request as far as its
  // capture id (image processing only: no text encoder, VAE or UNet) and asks the store.
  bool has_template(const EditRequest& request) const override;
  engine::CaptureStore& store() override { return *store_; }
  const std::string& fingerprint() const override { return components_.fingerprint; }

  const SDPipelineComponents& components() const { return components_; }
  at::Device device() const override { return device_; }
  bool is_inpainting_unet() const { return components_.unet->config().in_channels == 9; }
  // Pixels per side that processing sizes are multiples of (VAE factor x UNet downsampling).
  int64_t size_multiple() const;

 private:
  std::unique_ptr<SDEditJob> prepare_job(const EditRequest& request, bool registering) const;
  // The model-free part of prepare_job: validation, the request with its steps resolved, the
  // original and processed images and masks, sizes, token mask and template hash. Returns the
  // processed image [1, 3, H, W] and mask [1, 1, H, W] as tensors.
  std::pair<at::Tensor, at::Tensor> prepare_images(const EditRequest& request, SDEditJob& job) const;
  // Looks the template up in the store and attaches a hidden replay (sd_edit_start.cpp).
  void attach_replay(SDEditJob& job) const;
  engine::CaptureId capture_id(const SDEditJob& job) const;

  SDPipelineComponents components_;
  std::shared_ptr<engine::CaptureStore> store_;
  at::Device device_ = at::Device(at::kCPU);  // the UNet's, read once (parameters() walks the tree)
};

}  // namespace flashps
