// The architecture of a trainable Flux Fill model with a fixed patch autoencoder, and how such a
// model folder is written in diffusers layout.
#pragma once
#include <ATen/Tensor.h>

#include <nlohmann/json.hpp>
#include <string>

#include "models/flux/flux_config.h"
#include "models/vae/patch_autoencoder.h"

namespace torch::nn {
class Module;
}

namespace flashps::training {

struct FillModelSpec {
  FluxConfig transformer;
  PatchAutoencoderConfig autoencoder;  // patch size and channels; the projection is fitted to the photos;
                                       // deblocking is written to the exported decoder only
  nlohmann::json scheduler_config;
  int64_t text_tokens = 4;  // learned "empty prompt" tokens (the model is unconditional)
  int native_size = 256;    // edit resolution; larger images are edited through a window
  // "sample": the transformer predicts the clean latents x0 and the pipeline converts to the
  // flow velocity, v = (x_t - x0) / sigma. A small DiT cannot copy its 64-value noisy input to
  // its output precisely enough for "velocity" (Flux's own output; samples keep token-sized
  // grain), while predicting x0 needs no such copy (cf. Li & He 2025, "Back to Basics").
  std::string prediction_type = "sample";
  // What the masked pixels of the conditioning image hold: "neutral" (mid-grey, as FLUX.1-Fill)
  // or "pyramid" (pipeline/flux/fill_conditioning.h); the pipeline reads it from model_index.json.
  std::string masked_image_fill = "neutral";

  nlohmann::json to_json() const;
};

// The bundled default model: 4 heads x 64, 2 double + 4 single blocks, 4x4-pixel patches
// projected on their 16 principal components (one token = 8x8 pixels, 64 values).
FillModelSpec small_fill_spec();

// Writes a patch autoencoder folder (config.json, and the projection when there is one).
void write_patch_autoencoder(const std::string& dir, const PatchAutoencoder& autoencoder);

// Writes <dir>/{model_index.json, transformer/, vae/, scheduler/, empty_prompt_embeds.safetensors}
// with the transformer's weights converted to `weights_dtype`.
void write_fill_model(const std::string& dir, const FillModelSpec& spec, const PatchAutoencoder& autoencoder,
                      torch::nn::Module& transformer,
                      const at::Tensor& prompt_embeds, const at::Tensor& pooled_prompt_embeds,
                      at::ScalarType weights_dtype, const nlohmann::json& notes);

}  // namespace flashps::training
