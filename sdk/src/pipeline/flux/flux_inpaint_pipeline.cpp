#include "pipeline/flux/flux_inpaint_pipeline.h"

#include <ATen/ATen.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/files/content_hash.h"
#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "models/flux/flux_block_work.h"
#include "models/loading/model_files.h"
#include "pipeline/default_steps.h"

namespace flashps {

FluxInpaintPipeline::FluxInpaintPipeline(FluxPipelineComponents components,
                                         std::shared_ptr<engine::CaptureStore> store)
    : InpaintLoop(std::move(store)), components_(std::move(components)) {
  recommended_steps_ = components_.default_steps;
  const FluxConfig& config = components_.transformer->config();
  const int64_t latent_channels = components_.vae->latent_channels();
  const int64_t vsf = vae_scale_factor();
  if (config.out_channels != latent_channels * 4)
    throw CorruptDataError(components_.model_dir + ": transformer out_channels " + std::to_string(config.out_channels) +
                           " does not match 4 x vae latent_channels " + std::to_string(latent_channels));
  // Fill layout: latents + masked-image latents + packed mask (vsf^2 * 4 channels).
  fill_layout_ = config.in_channels == 2 * config.out_channels + vsf * vsf * 4;
  if (!fill_layout_ && config.in_channels != config.out_channels)
    throw UnsupportedError(components_.model_dir + ": transformer in_channels " + std::to_string(config.in_channels) +
                           " is neither a plain (" + std::to_string(config.out_channels) + ") nor a Fill (" +
                           std::to_string(2 * config.out_channels + vsf * vsf * 4) + ") layout");
}

FluxInpaintPipeline::~FluxInpaintPipeline() = default;

void apply_flux_model_index(FluxPipelineComponents& components, const nlohmann::json& index,
                            const std::string& index_source) {
  const auto native = index.find("_flashps_native_size");
  if (native != index.end()) {
    if (!native->is_number_integer() || native->get<int>() < 16)
      throw CorruptDataError(index_source + ": _flashps_native_size must be an integer of at least 16");
    components.native_size = native->get<int>();
  }
  components.unconditional = index.value("_flashps_unconditional", false);
  const std::string prediction = index.value("_flashps_prediction_type", std::string("velocity"));
  if (prediction != "velocity" && prediction != "sample")
    throw CorruptDataError(index_source +
                           ": _flashps_prediction_type must be \"velocity\" or \"sample\", got \"" + prediction +
                           "\"");
  components.predicts_sample = prediction == "sample";
  components.masked_image_fill = parse_masked_image_fill(
      index.value("_flashps_masked_image_fill", std::string("neutral")), index_source);
  const auto texture = index.find("_flashps_texture_transfer");
  if (texture != index.end()) {
    if (!texture->is_boolean())
      throw CorruptDataError(index_source + ": _flashps_texture_transfer must be true or false");
    components.texture_transfer = texture->get<bool>();
  }
  components.default_steps = default_steps_of(index, index_source);
}

void check_flux_text_fits(const FluxPipelineComponents& components, const std::string& source) {
  if (components.text.present()) {
    const FluxConfig& transformer = components.transformer->config();
    const int64_t t5_width = components.text.text_encoder_2->config().d_model;
    const int64_t clip_width = components.text.text_encoder->config().hidden_size;
    if (t5_width != transformer.joint_attention_dim || clip_width != transformer.pooled_projection_dim)
      throw CorruptDataError(source + ": the text encoders do not fit the transformer: text_encoder_2's d_model " +
                             std::to_string(t5_width) + " must be its joint_attention_dim " +
                             std::to_string(transformer.joint_attention_dim) + ", text_encoder's hidden_size " +
                             std::to_string(clip_width) + " its pooled_projection_dim " +
                             std::to_string(transformer.pooled_projection_dim));
  }
}

void move_flux_components(FluxPipelineComponents& components, at::Device device) {
  if (device.is_cpu()) return;
  components.transformer->to(device);
  components.vae->to_device(device);
  if (components.text.present()) {
    components.text.text_encoder->to(device);
    components.text.text_encoder_2->to(device);
  }
}

std::string FluxInpaintPipeline::folder_fingerprint(const std::string& model_dir) {
  return model_fingerprint(model_dir, {"transformer", "vae", "scheduler"}, {"transformer", "vae"});
}

std::unique_ptr<FluxInpaintPipeline> FluxInpaintPipeline::load(const std::string& model_dir,
                                                               at::ScalarType dtype,
                                                               std::shared_ptr<engine::CaptureStore> store,
                                                               at::Device device) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(model_dir)) throw NotFoundError(model_dir + ": model folder does not exist");
  if (!fs::exists(fs::path(model_dir) / "transformer" / "config.json"))
    throw NotFoundError(model_dir + ": not a Flux pipeline folder (no transformer/config.json)");
  FluxPipelineComponents components;
  components.model_dir = model_dir;
  components.transformer = load_flux_transformer((fs::path(model_dir) / "transformer").string(), dtype);
  components.vae = load_image_autoencoder((fs::path(model_dir) / "vae").string(), autoencoder_dtype_for(dtype));
  const fs::path scheduler_config = fs::path(model_dir) / "scheduler" / "scheduler_config.json";
  if (!fs::exists(scheduler_config)) throw NotFoundError(model_dir + ": no scheduler/scheduler_config.json");
  components.scheduler = load_scheduler(scheduler_config.string());
  const fs::path empty_prompt = fs::path(model_dir) / "empty_prompt_embeds.safetensors";
  if (fs::exists(empty_prompt)) components.empty_prompt = load_conditioning(empty_prompt.string());
  const FluxConfig& config = components.transformer->config();
  components.default_guidance = config.in_channels > config.out_channels ? 30.0 : 3.5;
  components.fingerprint = folder_fingerprint(model_dir);
  const fs::path model_index = fs::path(model_dir) / "model_index.json";
  if (fs::exists(model_index)) {
    const nlohmann::json index = read_json_file(model_index.string());
    components.text = load_flux_text_encoders(model_dir, index, model_index.string(), dtype);
    check_flux_text_fits(components, model_dir);
    apply_flux_model_index(components, index, model_index.string());
  }
  move_flux_components(components, device);
  return std::make_unique<FluxInpaintPipeline>(std::move(components), std::move(store));
}

PipelineCostProfile FluxInpaintPipeline::cost_profile() const {
  PipelineCostProfile profile;
  profile.family = "Flux transformer";
  profile.blocks = flux_block_work(components_.transformer->config(), c10::elementSize(components_.transformer->dtype()));
  profile.cache_mode = engine::CacheMode::kv;
  profile.speed = planning_speed();
  const int64_t token_pixels = vae_scale_factor() * 2;  // 2x2 latent patches per token
  const int64_t side = components_.native_size > 0 ? components_.native_size : 512;
  profile.image_tokens = (side / token_pixels) * (side / token_pixels);
  profile.text_tokens = components_.text.present()            ? components_.text.max_sequence_length
                        : components_.empty_prompt.defined() ? components_.empty_prompt.prompt_embeds.size(0)
                                                             : 512;
  profile.steps = 28;  // Flux.1's usual schedule: a serving workload's typical request
  return profile;
}

}  // namespace flashps
