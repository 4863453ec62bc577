// FluxInpaintPipeline from a single file (.safetensors or .gguf: Black Forest Labs' or ComfyUI's
// keys, or a file FlashPS wrote), its configs carried or built in (release_configs.h), its VAE
// and text encoders from the file or the component files given beside it.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/diagnostics/error.h"
#include "models/loading/checkpoint_prefix.h"
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

// CLIP-L and T5 as load_flux_text_encoders loads a folder's, from the file or the files beside it.
FluxTextEncoders load_file_text_encoders(const ModelSource& source, const std::string& clip_tokenizer,
                                         const std::string& t5_tokenizer, at::ScalarType dtype) {
  FluxTextEncoders encoders;
  encoders.tokenizer = ClipTokenizer::load(clip_tokenizer);
  // CLIP-L is small: float32 whatever the pipeline's dtype, as its pooled vector steers every block.
  encoders.text_encoder = load_clip_component(source, "text_encoder", at::kFloat);
  const std::string spiece = (std::filesystem::path(t5_tokenizer) / "spiece.model").string();
  encoders.tokenizer_2 = T5Tokenizer::load(spiece);
  encoders.text_encoder_2 = load_t5_component(source, dtype);
  if (encoders.tokenizer_2->vocab_size() > encoders.text_encoder_2->config().vocab_size)
    throw CorruptDataError(source.path + ": the T5 tokenizer's vocabulary of " +
                           std::to_string(encoders.tokenizer_2->vocab_size()) +
                           " pieces is larger than text_encoder_2's vocab_size " +
                           std::to_string(encoders.text_encoder_2->config().vocab_size));
  const auto length = source.index.find("_flashps_max_sequence_length");
  if (length != source.index.end()) {
    if (!length->is_number_integer() || length->get<int>() < 1 || length->get<int>() > 512)
      throw CorruptDataError(source.config_source("model_index.json") +
                             ": _flashps_max_sequence_length must be an integer from 1 to 512");
    encoders.max_sequence_length = length->get<int>();
  }
  // The model's fingerprint covers both encoders' stored tensors (file or files beside it).
  encoders.fingerprint = "flux-text:" + single_file_fingerprint(source) + ":" + c10::toString(dtype);
  return encoders;
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
  }
  // Tokenizers are found (or refused, naming --tokenizers) before the weights load.
  std::optional<TokenizerFolder> clip_tokenizer, t5_tokenizer;
  if (names_text) {
    clip_tokenizer.emplace(source, "tokenizer");
    t5_tokenizer.emplace(source, "tokenizer_2");
  }
  FluxPipelineComponents components;
  components.model_dir = source.path;
  components.files = source.files;

  const std::string transformer_source = source.config_source("transformer/config.json");
  const FluxConfig config = FluxConfig::from_json(required_config(source, "transformer/config.json"), transformer_source);
  {
    // One tensor's file pages at a time; the file stays mapped only while loading.
    const std::string& prefix = *recognised.components.denoiser;
    auto tensors = flux_transformer_tensors(prefix.empty() ? model_tensors_of(source.file->tensors)
                                                           : tensors_under_prefix(source.file->tensors, prefix));
    components.transformer = load_flux_transformer(*tensors, config, transformer_source, dtype, /*keep_quantized=*/true);
  }
  components.vae = load_vae_component(source, autoencoder_dtype_for(dtype));
  const std::string scheduler_source = source.config_source("scheduler/scheduler_config.json");
  components.scheduler = make_scheduler(required_config(source, "scheduler/scheduler_config.json"), scheduler_source);
  components.empty_prompt = carried_empty_prompt(source);
  components.default_guidance = config.in_channels > config.out_channels ? 30.0 : 3.5;
  if (names_text) components.text = load_file_text_encoders(source, clip_tokenizer->path(), t5_tokenizer->path(), dtype);
  check_flux_text_fits(components, source.path);
  apply_flux_model_index(components, index, index_source);
  components.fingerprint = single_file_fingerprint(source);
  move_flux_components(components, device);
  return std::make_unique<FluxInpaintPipeline>(std::move(components), std::move(store));
}

}  // namespace flashps
