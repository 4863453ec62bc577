// SDInpaintPipeline from a single file: original Stable Diffusion 1.x / 2.x / XL checkpoints
// (LDM / SGM keys), their configs built in (sd_release_configs.cpp) or carried by a file FlashPS
// wrote; the VAE and text encoders from the file or the files given beside it; tokenizers from
// --tokenizers or beside the file (single files carry none).
#include <nlohmann/json.hpp>
#include <optional>

#include "core/diagnostics/error.h"
#include "pipeline/component_files.h"
#include "pipeline/default_steps.h"
#include "pipeline/family_registry.h"
#include "pipeline/single_file_fingerprint.h"
#include "pipeline/stable_diffusion/sd_inpaint_pipeline.h"

namespace flashps {

std::unique_ptr<SDInpaintPipeline> SDInpaintPipeline::load(const ModelSource& source, at::ScalarType dtype,
                                                           std::shared_ptr<engine::CaptureStore> store,
                                                           at::Device device) {
  if (!source.is_file()) return load(source.path, dtype, std::move(store), device);
  const nlohmann::json& index = source.index;
  const std::string index_source = source.config_source("model_index.json");
  const bool xl = index.contains("text_encoder_2") && !index["text_encoder_2"].is_null();
  // What the file lacks is named before anything loads.
  if (!has_component(source, "vae")) throw NotFoundError(source.path + ": no VAE in this file: pass --vae FILE");
  if (!has_component(source, "text_encoder"))
    throw NotFoundError(source.path + ": no text encoder in this file: pass --text-encoder FILE (CLIP-L" +
                        std::string(std::string(source.recognised.type->name).rfind("sd2", 0) == 0
                                        ? "; SD 2: OpenCLIP ViT-H)"
                                        : ")"));
  if (xl && !has_component(source, "text_encoder_2"))
    throw NotFoundError(source.path + ": no second text encoder in this file: pass --text-encoder-2 FILE (CLIP-G)");
  const TokenizerFolder tokenizer(source, "tokenizer");
  std::optional<TokenizerFolder> tokenizer_2;
  if (xl) tokenizer_2.emplace(source, "tokenizer_2");

  SDPipelineComponents components;
  components.model_dir = source.path;
  components.files = source.files;
  components.default_steps = default_steps_of(index, index_source);
  components.unet = load_unet_component(source, dtype);
  components.vae = load_vae_component(source, autoencoder_dtype_for(dtype));
  components.text.tokenizer = ClipTokenizer::load(tokenizer.path());
  components.text.text_encoder = load_clip_component(source, "text_encoder", dtype);
  if (xl) {
    components.text.tokenizer_2 = ClipTokenizer::load(tokenizer_2->path());
    components.text.text_encoder_2 = load_clip_component(source, "text_encoder_2", dtype);
    components.force_zeros_for_empty_prompt = index.value("force_zeros_for_empty_prompt", true);
    components.default_guidance = 5.0;
  }
  const nlohmann::json scheduler = source.config("scheduler/scheduler_config.json");
  if (!scheduler.is_object())
    throw NotFoundError(source.config_source("scheduler/scheduler_config.json") + ": missing");
  components.scheduler = make_scheduler(scheduler, source.config_source("scheduler/scheduler_config.json"));
  if (!device.is_cpu()) {
    components.unet->to(device);
    components.vae->to_device(device);
    components.text.text_encoder->to(device);
    if (components.text.text_encoder_2) components.text.text_encoder_2->to(device);
  }
  components.fingerprint = single_file_fingerprint(source);
  return std::make_unique<SDInpaintPipeline>(std::move(components), std::move(store));
}

}  // namespace flashps
