#include "pipeline/stable_diffusion/sd_family.h"

#include "pipeline/stable_diffusion/sd_inpaint_pipeline.h"

namespace flashps {
namespace {

// The weights, as a pipeline without a store of its own: new pipelines copy its components,
// which share the modules' parameters (LibTorch modules are handles).
class StableDiffusionModel final : public InpaintModel {
 public:
  explicit StableDiffusionModel(std::unique_ptr<SDInpaintPipeline> weights) : weights_(std::move(weights)) {}

  const FamilyEntry& family() const override { return stable_diffusion_family(); }
  ModelCapabilities capabilities() const override {
    ModelCapabilities capabilities;
    capabilities.takes_text = true;
    capabilities.guidance = true;
    capabilities.kv_replay = false;
    capabilities.why_no_kv = "their ResNets are dense, so only block outputs are reused";
    capabilities.hidden_replay = true;
    capabilities.size_multiple = static_cast<int>(weights_->size_multiple());
    capabilities.native_size = 0;
    capabilities.default_steps = weights_->recommended_steps();
    capabilities.is_fill = weights_->is_inpainting_unet();
    return capabilities;
  }
  const std::string& model_dir() const override { return weights_->components().model_dir; }
  const ModelFiles& files() const override { return weights_->components().files; }
  const std::string& fingerprint() const override { return weights_->components().fingerprint; }
  at::Device device() const override { return weights_->device(); }
  at::ScalarType dtype() const override { return weights_->components().unet->dtype(); }
  std::unique_ptr<InpaintPipeline> new_pipeline(std::shared_ptr<engine::CaptureStore> store) const override {
    return std::make_unique<SDInpaintPipeline>(weights_->components(), std::move(store));
  }

 private:
  std::unique_ptr<SDInpaintPipeline> weights_;
};

}  // namespace

const FamilyEntry& stable_diffusion_family() {
  static const FamilyEntry family{
      "stable-diffusion", "Stable Diffusion", 2 /* FLASHPS_FAMILY_STABLE_DIFFUSION */,
      "Stable Diffusion 1.x, 2.x and XL (StableDiffusion*Pipeline folders with a UNet2DConditionModel, and single files)",
      [](const ModelSource& source) { return source.pipeline_class.rfind("StableDiffusion", 0) == 0; },
      [](const ModelSource& source, const ModelLoadOptions& options) -> std::shared_ptr<InpaintModel> {
        if (source.is_file())
          return std::make_shared<StableDiffusionModel>(
              SDInpaintPipeline::load(source, options.dtype, nullptr, options.device));
        return std::make_shared<StableDiffusionModel>(
            SDInpaintPipeline::load(source.path, options.dtype, nullptr, options.device));
      }};
  return family;
}

}  // namespace flashps
