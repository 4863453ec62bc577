// The models `flashps dev random-model --preset` writes: Flux Fill at FLUX.1-Fill-dev's real sizes
// and at the size `flashps bench edit` times, each with its text encoders and VAE.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/random/random_model.h"

namespace flashps {

struct RandomModelPreset {
  std::string family = "flux";  // "flux" | "sd" (spec.transformer and t5_config unused; unet_config)
  std::string name;       // "flux-fill-dev"
  std::string file_stem;  // "flux1-fill-dev": the names of the GGUF and single files
  RandomFluxModelSpec spec;    // transformer, VAE, scheduler, empty-prompt length, T5 length
  nlohmann::json clip_config;  // text_encoder/config.json (CLIPTextModel)
  nlohmann::json t5_config;    // text_encoder_2/config.json (T5EncoderModel)
  nlohmann::json unet_config;  // sd: unet/config.json (UNet2DConditionModel)
  nlohmann::json clip2_config;  // sdxl: text_encoder_2/config.json (CLIPTextModelWithProjection), else null
};

// FLUX.1-Fill-dev's real sizes: transformer 12B (19 + 38 blocks, 3072 wide, guidance embedding),
// CLIP-L, T5-XXL (4.7B), the Flux VAE.
RandomModelPreset flux_fill_dev_preset();
// A Flux Fill transformer of `transformer`'s size (e.g. `flashps bench edit`'s, which lives above
// this layer) with text encoders as wide as its conditioning inputs and the small test VAE.
RandomModelPreset small_flux_fill_preset(const std::string& name, const FluxConfig& transformer);
// runwayml/stable-diffusion-inpainting's real sizes: UNet 860M (9 input channels), the SD VAE,
// CLIP-L; a PNDM scheduler.
RandomModelPreset sd15_inpaint_preset();
// stabilityai/stable-diffusion-xl-base-1.0's real sizes: UNet 2.6B, the SDXL VAE, CLIP-L and
// OpenCLIP bigG with projection; an Euler scheduler.
RandomModelPreset sdxl_preset();

}  // namespace flashps
