// `flashps dev random-model OUT --preset P --format folder|single-file|gguf --quant Q`: a
// random-weight model written in the layouts users keep, at any size. Every tensor is generated,
// encoded and written alone (streamed_tensor_file.h), so a FLUX.1-Fill-dev-size model (12B + 4.7B
// parameters) is written in little memory; its values depend only on the seed and the key, so
// the formats of one seed hold the same weights.
//  folder:      a diffusers folder, every component's weights in the --quant float type.
//  single-file: one .safetensors in ComfyUI's all-in-one Flux layout: model.diffusion_model.*
//               (Black Forest Labs' keys), vae.*, text_encoders.clip_l.transformer.*,
//               text_encoders.t5xxl.transformer.* (Hugging Face keys).
//  gguf:        a folder as users keep a GGUF download: <stem>-<QUANT>.gguf (BFL keys, tensor types
//               as ComfyUI-GGUF chooses them), ae.safetensors, clip_l.safetensors,
//               t5xxl_<fp16|fp8_e4m3fn|...>.safetensors.
// Single files and GGUF files carry the folder's small files (configs, tokenizers) as metadata
// "flashps.files" and the empty-prompt embeddings as tensors "flashps.empty_prompt.<key>", so
// FlashPS loads them although their configs are no real release's.
#pragma once
#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "models/random/random_presets.h"

namespace flashps {

enum class RandomModelFormat { folder, single_file, gguf };

// "folder" | "single-file" | "gguf"; throws InvalidArgumentError naming --format.
RandomModelFormat random_model_format(const std::string& name);

struct RandomCheckpointRequest {
  RandomModelPreset preset;
  RandomModelFormat format = RandomModelFormat::folder;
  // The transformer's weights: f32 f16 bf16 fp8 (e4m3fn matrices, bf16 vectors); with gguf also
  // q8_0 q4_0 q4_1 q5_0 q5_1 q4_k q5_k q6_k.
  std::string quant = "f32";
  // T5's weights (f32 f16 bf16 fp8); "" = f32 when quant is f32, else f16. CLIP and the VAE are
  // stored f32 when quant is f32, else f16.
  std::string text_encoder_quant;
  uint64_t seed = 0;
  std::function<void(const std::string&)> progress;  // a line now and then
  const std::atomic<bool>* cancel = nullptr;          // when set: stop, remove the partial output, throw Cancelled
};

struct RandomCheckpointResult {
  std::vector<std::string> files;  // every file written, paths under `out`
  uint64_t bytes = 0;
  int64_t parameters = 0;
};

// Writes the model to `out` (a new folder; for single-file a new .safetensors file). Bad
// arguments throw InvalidArgumentError naming the option; nothing is left under `out` on failure.
RandomCheckpointResult write_random_checkpoint(const std::string& out, const RandomCheckpointRequest& request);

// The small files of the preset's diffusers folder (relative path -> content): model_index.json,
// component configs, scheduler config, tokenizer files.
std::map<std::string, std::string> random_model_small_files(const RandomModelPreset& preset);
// Those files as the "flashps.files" metadata text (binary files as "base64:<data>").
std::string flashps_files_metadata(const std::map<std::string, std::string>& files);

}  // namespace flashps
