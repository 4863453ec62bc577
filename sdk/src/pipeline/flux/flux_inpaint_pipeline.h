// Inpainting with a Flux-architecture model (diffusers folder: transformer/, vae/, scheduler/).
//   Fill models (FLUX.1-Fill layout): conditioning exactly as diffusers' FluxFillPipeline
//     prepares it: masked-image latents and the pixel mask packed to vsf^2*4 channels,
//     concatenated to the latents on the channel axis.
//   Other Flux models: per-step blending of the unmasked latents with the re-noised template
//     (diffusers' FluxInpaintPipeline).
// Unmasked pixels are pasted back at the end (optionally with a grown/feathered mask).
//
// Mask-aware editing: register_template() runs the template in full and captures its
// activations; edit() of the same template (same size, steps, strength, guidance) then
// computes only the masked tokens and takes the rest from the capture.
#pragma once
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "engine/capture.h"
#include "engine/cost_model.h"
#include "models/flux/flux_transformer.h"
#include "models/vae/image_autoencoder.h"
#include "pipeline/edit_job.h"
#include "pipeline/edit_types.h"
#include "pipeline/flux/fill_conditioning.h"
#include "pipeline/inpaint_loop.h"
#include "pipeline/inpaint_model.h"
#include "pipeline/flux/flux_text_encoding.h"
#include "schedulers/scheduler.h"

namespace flashps {

struct FluxEditJob;

struct FluxPipelineComponents {
  FluxTransformer transformer{nullptr};
  std::shared_ptr<ImageAutoencoder> vae;
  std::shared_ptr<const Scheduler> scheduler;  // each job runs a clone
  Conditioning empty_prompt;  // stored embeddings for models without a text encoder
  FluxTextEncoders text;      // CLIP + T5 of folders that have them (FluxPipeline's encode_prompt)
  std::string model_dir;    // the folder, or the single file
  ModelFiles files;         // given beside a single file
  std::string fingerprint;  // hash of configs and weight headers
  double default_guidance = 30.0;
  int native_size = 0;  // pixels per side the model was trained at (model_index.json), 0 = any
  bool unconditional = false;  // trained without prompts: prompt embeddings are ignored
  // The transformer predicts clean latents ("sample") instead of Flux's flow velocity; the
  // pipeline converts: v = (x_t - x0) / sigma. From model_index.json "_flashps_prediction_type".
  bool predicts_sample = false;
  // What the masked pixels of the Fill conditioning image hold ("_flashps_masked_image_fill").
  MaskedImageFill masked_image_fill = MaskedImageFill::neutral;
  // Copy fine detail from the surroundings into the fill (classical/texture_transfer.h) unless a
  // request says otherwise; "_flashps_texture_transfer" in model_index.json.
  bool texture_transfer = false;
  // Denoising steps of a request that names none ("_flashps_default_steps").
  int default_steps = 28;
};

struct ModelSource;

// Shared by the folder and single-file loaders: model_index.json's "_flashps_*" settings, the
// check that the text encoders fit the transformer, the move to a device.
void apply_flux_model_index(FluxPipelineComponents& components, const nlohmann::json& index,
                            const std::string& index_source);
void check_flux_text_fits(const FluxPipelineComponents& components, const std::string& source);
void move_flux_components(FluxPipelineComponents& components, at::Device device);

class FluxInpaintPipeline final : public InpaintLoop {
 public:
  // Loads a diffusers-layout folder onto `device`: its models, latents and cache replays live
  // there; images and captures stay in host memory, and noise is drawn on the host so a seed
  // gives the same noise on every device. `store` keeps captures (default: in memory).
  static std::unique_ptr<FluxInpaintPipeline> load(const std::string& model_dir, at::ScalarType dtype,
                                                   std::shared_ptr<engine::CaptureStore> store = nullptr,
                                                   at::Device device = at::Device(at::kCPU));
  // Loads a single-file model (ModelSource::read: a .safetensors or .gguf file, its configs
  // carried or built in, component files beside it); flux_file_loading.cpp.
  static std::unique_ptr<FluxInpaintPipeline> load(const ModelSource& source, at::ScalarType dtype,
                                                   std::shared_ptr<engine::CaptureStore> store = nullptr,
                                                   at::Device device = at::Device(at::kCPU));
  FluxInpaintPipeline(FluxPipelineComponents components, std::shared_ptr<engine::CaptureStore> store);
  // A folder's fingerprint as load() computes it (flashps model info shows it without loading).
  static std::string folder_fingerprint(const std::string& model_dir);
  ~FluxInpaintPipeline();

  // Editing, stepwise editing, templates and the store: pipeline/inpaint_loop.h.
  PipelineCostProfile cost_profile() const override;

  bool is_unconditional() const { return components_.unconditional; }
  // Whether edits copy fine detail from the surroundings unless a request says (texture_transfer).
  bool recommends_texture_transfer() const override { return components_.texture_transfer; }
  at::Device device() const override { return components_.transformer->proj_out->weight_device(); }
  bool is_fill() const { return components_.transformer->config().is_fill() || fill_layout_; }
  bool has_text_encoder() const { return components_.text.present(); }
  int64_t vae_scale_factor() const;
  const FluxPipelineComponents& components() const { return components_; }
  const std::string& fingerprint() const override { return components_.fingerprint; }

  struct Prepared;  // an edit request turned into tensors (flux_inpaint_prepare.cpp)

 private:
  // The loop's family hooks (pipeline/inpaint_loop.h): preparation and replay in
  // flux_edit_start.cpp, latent codec and denoiser in flux_edit_steps.cpp.
  std::string pipeline_name() const override { return "Flux pipeline"; }
  std::unique_ptr<InpaintJob> prepare_job(const EditRequest& request, bool registering) const override;
  TemplateKey template_key(const EditRequest& request) const override;
  engine::CaptureId capture_id(const InpaintJob& job) const override;
  void encode(InpaintJob& job, bool template_latents) const override;
  at::Tensor latent_noise(const InpaintJob& job, at::Generator& generator) const override;
  at::Tensor latent_blend_mask(const InpaintJob& job) const override;
  std::function<at::Tensor(const at::Tensor&)> latent_decoder(const InpaintJob& job) const override;
  bool blends_latents() const override { return !is_fill(); }  // FluxInpaintPipeline's blending
  int64_t token_pixels() const override { return 2 * vae_scale_factor(); }  // 2x2 latent patches
  const Scheduler& model_scheduler() const override { return *components_.scheduler; }
  void prepare_denoiser(InpaintJob& job) const override;
  std::vector<at::Tensor> denoise(const std::vector<InpaintJob*>& batch) override;
  engine::ReplayBlocks replay_blocks(const InpaintJob& job, const engine::TokenMask& mask) const override;
  at::ScalarType activation_dtype() const override { return components_.transformer->dtype(); }
  void estimate_tokens(const EditRequest& request, engine::RequestWork& work) const override;

  // whole_image: for images larger than the context size, process the whole image scaled down
  // to fit it instead of a window around the mask (templates registered without a mask).
  Prepared prepare(const EditRequest& request, EditStats& stats, bool whole_image = false) const;
  // A template registered without a mask was processed whole (scaled to the context size); an
  // edit of it whose own processing is a window around the mask switches to that processing, so
  // the capture matches. Returns whether it switched.
  bool use_whole_image_template(Prepared& prepared, EditStats& stats, const EditRequest& request) const;
  // job.fill_embedding for the rows the job's model calls carry (computed unless current).
  const at::Tensor& update_fill_embedding(FluxEditJob& job) const;
  engine::CaptureId capture_id(const Prepared& prepared, const EditRequest& request) const;

  FluxPipelineComponents components_;
  bool fill_layout_ = false;  // in_channels == out_channels + conditioning channels
};

}  // namespace flashps
