// FluxInpaintPipeline from a single file (.safetensors or .gguf: Black Forest Labs' or ComfyUI's
// keys, or a file FlashPS wrote), its configs carried or built in (release_configs.h), its VAE
// and text encoders from the file or the component files given beside it.
#include <nlohmann/json.hpp>

#include "core/diagnostics/error.h"
#include "models/loading/model_files.h"
#include "pipeline/component_files.h"
#include "pipeline/family_registry.h"
#include "pipeline/flux/flux_inpaint_pipeline.h"
#include "pipeline/single_file_fingerprint.h"

namespace flashps {
namespace {

nlohmann::json required_config(const ModelSource& source, const std::string& relative) {
  nlohmann::json config = source.config(relative);
  if (!config.is_object()) throw NotFoundError(source.config_source(relative) + ": missing (a Flux model needs it)");
  return config;
}

}  // namespace

std::unique_ptr<FluxInpaintPipeline> FluxInpaintPipeline::load(const ModelSource& source, at::ScalarType dtype,
                                                               std::shared_ptr<engine::CaptureStore> store,
                                                               at::Device device) {
  if (!source.is_file()) return load(source.path, dtype, std::move(store), device);
  const RecognisedFile& recognised = source.recognised;
  if (!recognised.components.denoiser)
    throw NotFoundError(source.path + ": no Flux transformer in this file");
  // What the file lacks is named before anything loads (a 12B transformer takes minutes).
  if (!has_component(source, "vae"))
    throw NotFoundError(source.path + ": no VAE in this file: pass --vae FILE (e.g. ae.safetensors for Flux)");
  const nlohmann::json& index = source.index;
  const std::string index_source = source.config_source("model_index.json");
  const bool names_text = (index.contains("text_encoder") && !index["text_encoder"].is_null()) ||
                          (index.contains("text_encoder_2") && !index["text_encoder_2"].is_null());
  if (names_text) {
    const bool clip = has_component(source, "text_encoder"), t5 = has_component(source, "text_encoder_2");
    if (!clip || !t5)
      throw NotFoundError(source.path + ": no " + (clip ? "T5" : t5 ? "CLIP-L" : "CLIP-L or T5") +
                          " text encoder in this file: pass " +
                          (clip ? "" : "--text-encoder FILE (e.g. clip_l.safetensors)") + (clip || t5 ? "" : " and ") +
                          (t5 ? "" : "--text-encoder-2 FILE (e.g. t5xxl_fp16.safetensors)"));
    throw UnsupportedError(source.path + ": loading Flux text encoders from files needs the CLIP and T5 key "
                           "layouts, which this build does not have yet");
  }
  FluxPipelineComponents components;
  components.model_dir = source.path;
  components.files = source.files;

  const std::string transformer_source = source.config_source("transformer/config.json");
  const FluxConfig config = FluxConfig::from_json(required_config(source, "transformer/config.json"), transformer_source);
  {
    // One tensor's file pages at a time; the file stays mapped only while loading.
    auto tensors = flux_transformer_tensors(checkpoint_subset(source.file->tensors, *recognised.components.denoiser));
    components.transformer = load_flux_transformer(*tensors, config, transformer_source, dtype);
  }
  components.vae = load_vae_component(source, autoencoder_dtype_for(dtype));
  const std::string scheduler_source = source.config_source("scheduler/scheduler_config.json");
  components.scheduler = make_scheduler(required_config(source, "scheduler/scheduler_config.json"), scheduler_source);
  components.empty_prompt = carried_empty_prompt(source);
  components.default_guidance = config.in_channels > config.out_channels ? 30.0 : 3.5;
  check_flux_text_fits(components, source.path);
  apply_flux_model_index(components, index, index_source);
  components.fingerprint = single_file_fingerprint(source);
  move_flux_components(components, device);
  return std::make_unique<FluxInpaintPipeline>(std::move(components), std::move(store));
}

}  // namespace flashps
