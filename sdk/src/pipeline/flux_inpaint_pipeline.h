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
#include <string>

#include "engine/capture.h"
#include "engine/cost_model.h"
#include "models/flux/flux_transformer.h"
#include "models/vae/image_autoencoder.h"
#include "pipeline/edit_job.h"
#include "pipeline/edit_types.h"
#include "pipeline/fill_conditioning.h"
#include "pipeline/inpaint_model.h"
#include "pipeline/flux_text_encoding.h"
#include "schedulers/scheduler.h"

namespace flashps {

struct FluxEditJob;

struct FluxPipelineComponents {
  FluxTransformer transformer{nullptr};
  std::shared_ptr<ImageAutoencoder> vae;
  std::shared_ptr<const Scheduler> scheduler;  // each job runs a clone
  Conditioning empty_prompt;  // stored embeddings for models without a text encoder
  FluxTextEncoders text;      // CLIP + T5 of folders that have them (FluxPipeline's encode_prompt)
  std::string model_dir;
  std::string fingerprint;  // hash of configs and weight headers
  double default_guidance = 30.0;
  int native_size = 0;  // pixels per side the model was trained at (model_index.json), 0 = any
  bool unconditional = false;  // trained without prompts: prompt embeddings are ignored
  // The transformer predicts clean latents ("sample") instead of Flux's flow velocity; the
  // pipeline converts: v = (x_t - x0) / sigma. From model_index.json "_flashps_prediction_type".
  bool predicts_sample = false;
  // What the masked pixels of the Fill conditioning image hold ("_flashps_masked_image_fill").
  MaskedImageFill masked_image_fill = MaskedImageFill::neutral;
  // Copy fine detail from the surroundings into the fill (pipeline/texture_transfer.h) unless a
  // request says otherwise; "_flashps_texture_transfer" in model_index.json.
  bool texture_transfer = false;
  // Denoising steps of a request that names none ("_flashps_default_steps").
  int default_steps = 28;
};

class FluxInpaintPipeline final : public InpaintPipeline {
 public:
  // Loads a diffusers-layout folder onto `device`: its models, latents and cache replays live
  // there; images and captures stay in host memory, and noise is drawn on the host so a seed
  // gives the same noise on every device. `store` keeps captures (default: in memory).
  static std::unique_ptr<FluxInpaintPipeline> load(const std::string& model_dir, at::ScalarType dtype,
                                                   std::shared_ptr<engine::CaptureStore> store = nullptr,
                                                   at::Device device = at::Device(at::kCPU));
  FluxInpaintPipeline(FluxPipelineComponents components, std::shared_ptr<engine::CaptureStore> store);
  ~FluxInpaintPipeline();

  // Stepwise editing for serving (pipeline/edit_job.h); thread-compatible: one thread steps a
  // pipeline at a time, start_edit/finish_edit may run on other threads meanwhile.
  std::unique_ptr<EditJob> start_edit(const EditRequest& request) override;
  void step(const std::vector<EditJob*>& jobs) override;
  EditResult finish_edit(EditJob& job) override;
  engine::RequestWork estimate_work(const EditRequest& request) const override;
  std::function<Image()> preview(const EditJob& job) const override;
  PipelineCostProfile cost_profile() const override;
  TemplateInfo register_template(const EditRequest& request, bool capture_kv = true,
                                 bool capture_hidden = true) override;
  // Whether edit(request) would replay a registered template: prepares the request as far as its
  // capture id (image processing only, no model) and asks the store.
  bool has_template(const EditRequest& request) const override;

  bool is_unconditional() const { return components_.unconditional; }
  // Whether edits copy fine detail from the surroundings unless a request says (texture_transfer).
  bool recommends_texture_transfer() const { return components_.texture_transfer; }
  at::Device device() const override { return components_.transformer->proj_out->weight.device(); }
  bool is_fill() const { return components_.transformer->config().is_fill() || fill_layout_; }
  bool has_text_encoder() const { return components_.text.present(); }
  int64_t vae_scale_factor() const;
  const FluxPipelineComponents& components() const { return components_; }
  engine::CaptureStore& store() override { return *store_; }
  const std::string& fingerprint() const override { return components_.fingerprint; }

  struct Prepared;  // an edit request turned into tensors (flux_inpaint_prepare.cpp)

 private:
  // whole_image: for images larger than the context size, process the whole image scaled down
  // to fit it instead of a window around the mask (templates registered without a mask).
  Prepared prepare(const EditRequest& request, EditStats& stats, bool whole_image = false) const;
  // Encodes the template, configures the job's scheduler and draws its noise (flux_edit_steps.cpp).
  void begin_denoising(FluxEditJob& job) const;
  // Looks the template up in the store and attaches a replay router (flux_edit_start.cpp).
  void attach_replay(FluxEditJob& job);
  // A template registered without a mask was processed whole (scaled to the context size); an
  // edit of it whose own processing is a window around the mask switches to that processing, so
  // the capture matches. Returns whether it switched.
  bool use_whole_image_template(Prepared& prepared, EditStats& stats, const EditRequest& request) const;
  // job.fill_embedding for the rows the job's model calls carry (computed unless current).
  const at::Tensor& update_fill_embedding(FluxEditJob& job) const;
  void restart_in_full(FluxEditJob& job, const std::string& why) const;
  Image finish(const Prepared& prepared, const EditRequest& request, const at::Tensor& latents,
               EditStats& stats) const;
  engine::CaptureId capture_id(const Prepared& prepared, const EditRequest& request) const;

  FluxPipelineComponents components_;
  std::shared_ptr<engine::CaptureStore> store_;
  bool fill_layout_ = false;  // in_channels == out_channels + conditioning channels
};

}  // namespace flashps
