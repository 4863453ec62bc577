#include "pipeline/flux/flux_family.h"

#include "pipeline/flux/flux_inpaint_pipeline.h"

namespace flashps {
namespace {

// The weights, as a pipeline without a store of its own: new pipelines copy its components,
// which share the modules' parameters (LibTorch modules are handles).
class FluxModel final : public InpaintModel {
 public:
  explicit FluxModel(std::unique_ptr<FluxInpaintPipeline> weights) : weights_(std::move(weights)) {}

  const FamilyEntry& family() const override { return flux_family(); }
  ModelCapabilities capabilities() const override {
    const FluxPipelineComponents& components = weights_->components();
    ModelCapabilities capabilities;
    capabilities.takes_text = weights_->has_text_encoder();
    capabilities.guidance = components.transformer->config().guidance_embeds;
    capabilities.kv_replay = true;
    capabilities.hidden_replay = true;
    capabilities.size_multiple = static_cast<int>(weights_->vae_scale_factor() * 2);  // 2x2 latent patches
    capabilities.native_size = components.native_size;
    capabilities.default_steps = weights_->recommended_steps();
    capabilities.is_fill = weights_->is_fill();
    capabilities.unconditional = weights_->is_unconditional();
    capabilities.recommends_texture_transfer = weights_->recommends_texture_transfer();
    return capabilities;
  }
  const std::string& model_dir() const override { return weights_->components().model_dir; }
  const ModelFiles& files() const override { return weights_->components().files; }
  const std::string& fingerprint() const override { return weights_->components().fingerprint; }
  at::Device device() const override { return weights_->device(); }
  at::ScalarType dtype() const override { return weights_->components().transformer->dtype(); }
  std::unique_ptr<InpaintPipeline> new_pipeline(std::shared_ptr<engine::CaptureStore> store) const override {
    return std::make_unique<FluxInpaintPipeline>(weights_->components(), std::move(store));
  }

 private:
  std::unique_ptr<FluxInpaintPipeline> weights_;
};

bool recognises_flux(const ModelSource& source) {
  if (source.pipeline_class.rfind("Flux", 0) == 0) return true;  // FluxPipeline, FluxFillPipeline, ...
  if (!source.pipeline_class.empty() || !source.has_file("transformer/config.json")) return false;
  const std::string transformer = source.component_class("transformer");
  return transformer.empty() || transformer == "FluxTransformer2DModel";
}

}  // namespace

const FamilyEntry& flux_family() {
  static const FamilyEntry family{
      "flux", "Flux", 1 /* FLASHPS_FAMILY_FLUX */,
      "Flux (FluxTransformer2DModel folders and single files: FLUX.1 dev, schnell and Fill, and the bundled model)", recognises_flux,
      [](const ModelSource& source, const ModelLoadOptions& options) -> std::shared_ptr<InpaintModel> {
        if (source.is_file())
          return std::make_shared<FluxModel>(FluxInpaintPipeline::load(source, options.dtype, nullptr, options.device));
        return std::make_shared<FluxModel>(FluxInpaintPipeline::load(source.path, options.dtype, nullptr, options.device));
      }};
  return family;
}

}  // namespace flashps
