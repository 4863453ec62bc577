#include "pipeline/stable_diffusion/sd_inpaint_pipeline.h"

#include <ATen/ATen.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "models/loading/model_files.h"
#include "models/unet/unet_block_work.h"
#include "pipeline/default_steps.h"

namespace flashps {

SDInpaintPipeline::SDInpaintPipeline(SDPipelineComponents components, std::shared_ptr<engine::CaptureStore> store)
    : InpaintLoop(std::move(store)), components_(std::move(components)) {
  recommended_steps_ = components_.default_steps;
  device_ = components_.unet->parameters().front().device();
  const UNetConfig& config = components_.unet->config();
  const int64_t latent_channels = components_.vae->latent_channels();
  if (config.out_channels != latent_channels)
    throw CorruptDataError(components_.model_dir + ": unet out_channels " + std::to_string(config.out_channels) +
                           " does not match the vae's latent_channels " + std::to_string(latent_channels));
  if (config.in_channels != latent_channels && config.in_channels != 2 * latent_channels + 1)
    throw UnsupportedError(components_.model_dir + ": unet in_channels " + std::to_string(config.in_channels) +
                           " is neither latents (" + std::to_string(latent_channels) + ") nor the inpainting layout (" +
                           std::to_string(2 * latent_channels + 1) + ")");
  if (components_.text.is_xl() != config.text_time_embedding)
    throw CorruptDataError(components_.model_dir +
                           ": an SDXL unet (text_time embeddings) needs text_encoder_2, and only it");
}

SDInpaintPipeline::~SDInpaintPipeline() = default;

int64_t SDInpaintPipeline::size_multiple() const {
  return components_.vae->scale_factor() * (int64_t(1) << (components_.unet->config().block_out_channels.size() - 1));
}

std::string SDInpaintPipeline::folder_fingerprint(const std::string& model_dir) {
  return model_fingerprint(
      model_dir, {"unet", "vae", "scheduler", "text_encoder", "text_encoder_2", "tokenizer", "tokenizer_2"},
      {"unet", "vae", "text_encoder", "text_encoder_2"});
}

std::unique_ptr<SDInpaintPipeline> SDInpaintPipeline::load(const std::string& model_dir, at::ScalarType dtype,
                                                           std::shared_ptr<engine::CaptureStore> store,
                                                           at::Device device) {
  namespace fs = std::filesystem;
  const fs::path index_path = fs::path(model_dir) / "model_index.json";
  if (!fs::exists(index_path))
    throw NotFoundError(model_dir + ": not a diffusers pipeline folder (no model_index.json)");
  const nlohmann::json index = read_json_file(index_path.string());
  auto component = [&](const char* name) -> std::string {
    const fs::path dir = fs::path(model_dir) / name;
    if (!index.contains(name) || index[name].is_null())
      throw UnsupportedError(index_path.string() + ": the pipeline lists no '" + name + "' component");
    if (!fs::is_directory(dir))
      throw NotFoundError(model_dir + ": pipeline folder has no '" + name + "' component (" + dir.string() + ")");
    return dir.string();
  };
  SDPipelineComponents components;
  components.model_dir = model_dir;
  components.default_steps = default_steps_of(index, index_path.string());
  components.unet = load_unet(component("unet"), dtype);
  components.vae = load_image_autoencoder(component("vae"), autoencoder_dtype_for(dtype));
  components.text.tokenizer = ClipTokenizer::load(component("tokenizer"));
  components.text.text_encoder = load_clip_text_model(component("text_encoder"), dtype);
  if (index.contains("text_encoder_2") && !index["text_encoder_2"].is_null()) {
    components.text.tokenizer_2 = ClipTokenizer::load(component("tokenizer_2"));
    components.text.text_encoder_2 = load_clip_text_model(component("text_encoder_2"), dtype);
    components.force_zeros_for_empty_prompt = index.value("force_zeros_for_empty_prompt", true);
    components.default_guidance = 5.0;
  }
  const fs::path scheduler_config = fs::path(component("scheduler")) / "scheduler_config.json";
  if (!fs::exists(scheduler_config)) throw NotFoundError(model_dir + ": no scheduler/scheduler_config.json");
  components.scheduler = load_scheduler(scheduler_config.string());
  if (!device.is_cpu()) {
    components.unet->to(device);
    components.vae->to_device(device);
    components.text.text_encoder->to(device);
    if (components.text.text_encoder_2) components.text.text_encoder_2->to(device);
  }
  components.fingerprint = folder_fingerprint(model_dir);
  return std::make_unique<SDInpaintPipeline>(std::move(components), std::move(store));
}

PipelineCostProfile SDInpaintPipeline::cost_profile() const {
  const UNet2DConditionModel& unet = components_.unet;
  PipelineCostProfile profile;
  profile.family = "Stable Diffusion UNet";
  // Transformer blocks the engine shrinks plus the dense rest, with CLIP's 77 context tokens.
  profile.blocks = unet_latent_grid_work(unet->config(), 77, c10::elementSize(unet->dtype()));
  profile.cache_mode = engine::CacheMode::hidden;
  profile.speed = planning_speed();
  const int64_t latent_side = 512 / components_.vae->scale_factor();  // SD 1.x's native 512 px
  profile.image_tokens = 2 * latent_side * latent_side;  // both guidance rows
  profile.text_tokens = 0;  // the prompt is cross-attention context, not token rows
  profile.steps = 50;       // diffusers' default for SD inpainting
  return profile;
}

}  // namespace flashps
