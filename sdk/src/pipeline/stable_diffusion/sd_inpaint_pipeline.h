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

#include "engine/capture.h"
#include "engine/cost_model.h"
#include "models/unet/unet_model.h"
#include "models/vae/image_autoencoder.h"
#include "pipeline/edit_job.h"
#include "pipeline/inpaint_loop.h"
#include "pipeline/inpaint_model.h"
#include "pipeline/stable_diffusion/sd_text_encoding.h"
#include "schedulers/scheduler.h"

namespace flashps {

struct SDEditJob;
struct ModelSource;

struct SDPipelineComponents {
  UNet2DConditionModel unet{nullptr};
  std::shared_ptr<ImageAutoencoder> vae;
  SDTextEncoders text;
  std::shared_ptr<const Scheduler> scheduler;  // each job runs a clone
  std::string model_dir;    // the folder, or the single file
  ModelFiles files;         // given beside a single file
  std::string fingerprint;  // hash of configs and weight headers (activation-cache identity)
  bool force_zeros_for_empty_prompt = false;
  double default_guidance = 7.5;
  int default_steps = 28;  // denoising steps of a request that names none
};

class SDInpaintPipeline final : public InpaintLoop {
 public:
  // Loads a diffusers folder onto `device` (its models, latents and cache replays live there;
  // noise is drawn on the host, so a seed gives the same noise on every device); Error names the
  // folder and the missing or unsupported component. `store` keeps template captures (default:
  // in memory).
  static std::unique_ptr<SDInpaintPipeline> load(const std::string& model_dir, at::ScalarType dtype,
                                                 std::shared_ptr<engine::CaptureStore> store = nullptr,
                                                 at::Device device = at::Device(at::kCPU));
  // A folder's fingerprint as load() computes it (flashps model info shows it without loading).
  static std::string folder_fingerprint(const std::string& model_dir);
  // Loads a single-file model (ModelSource::read); sd_file_loading.cpp.
  static std::unique_ptr<SDInpaintPipeline> load(const ModelSource& source, at::ScalarType dtype,
                                                 std::shared_ptr<engine::CaptureStore> store = nullptr,
                                                 at::Device device = at::Device(at::kCPU));
  explicit SDInpaintPipeline(SDPipelineComponents components, std::shared_ptr<engine::CaptureStore> store = nullptr);
  ~SDInpaintPipeline();

  // Editing, stepwise editing, templates (captures of every transformer block's output; UNets
  // replay those only) and the store: pipeline/inpaint_loop.h.
  PipelineCostProfile cost_profile() const override;
  const std::string& fingerprint() const override { return components_.fingerprint; }

  const SDPipelineComponents& components() const { return components_; }
  at::Device device() const override { return device_; }
  bool is_inpainting_unet() const { return components_.unet->config().in_channels == 9; }
  // Pixels per side that processing sizes are multiples of (VAE factor x UNet downsampling).
  int64_t size_multiple() const;

 private:
  // The loop's family hooks (pipeline/inpaint_loop.h): preparation in sd_inpaint_prepare.cpp,
  // replay and estimates in sd_edit_start.cpp, latent codec and denoiser in sd_edit_steps.cpp.
  std::string pipeline_name() const override { return "Stable Diffusion pipeline"; }
  std::unique_ptr<InpaintJob> prepare_job(const EditRequest& request, bool registering) const override;
  TemplateKey template_key(const EditRequest& request) const override;
  engine::CaptureId capture_id(const InpaintJob& job) const override;
  void encode(InpaintJob& job, bool template_latents) const override;
  at::Tensor latent_noise(const InpaintJob& job, at::Generator& generator) const override;
  at::Tensor latent_blend_mask(const InpaintJob& job) const override;
  std::function<at::Tensor(const at::Tensor&)> latent_decoder(const InpaintJob& job) const override;
  bool blends_latents() const override { return !is_inpainting_unet(); }  // 4-channel UNets
  int64_t token_pixels() const override { return components_.vae->scale_factor(); }  // latent pixels
  const Scheduler& model_scheduler() const override { return *components_.scheduler; }
  std::vector<at::Tensor> denoise(const std::vector<InpaintJob*>& batch) override;
  engine::ReplayBlocks replay_blocks(const InpaintJob& job, const engine::TokenMask& mask) const override;
  void restrict_replay(engine::ReplaySettings& settings) const override;
  at::ScalarType activation_dtype() const override { return components_.unet->dtype(); }
  void estimate_tokens(const EditRequest& request, engine::RequestWork& work) const override;

  // The model-free part of prepare_job: validation, the request with its steps resolved, the
  // original and processed images and masks, sizes, token mask and template hash.
  void prepare_images(const EditRequest& request, SDEditJob& job) const;

  SDPipelineComponents components_;
  at::Device device_ = at::Device(at::kCPU);  // the UNet's, read once (parameters() walks the tree)
};

}  // namespace flashps
