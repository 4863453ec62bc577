// Flux Fill conditioning, as diffusers' FluxFillPipeline prepares it: the latents of the masked
// image (masked pixels set to 0, mid-grey in [-1, 1]) and the pixel mask folded to latent
// resolution, both packed into tokens. Shared by the inpainting pipeline and the trainer.
#pragma once
#include <ATen/Tensor.h>

#include <string>

#include "models/vae/image_autoencoder.h"

namespace flashps {

// What the masked pixels of the conditioning image hold. FLUX.1-Fill checkpoints are trained
// with `neutral`; a model trained with another fill records it in model_index.json
// ("_flashps_masked_image_fill") and gets the same at inference.
enum class MaskedImageFill {
  neutral,  // 0 (mid-grey), as diffusers
  pyramid,  // classical/pyramid_fill.h: a smooth field continuing the colours around the hole
};

// "neutral" | "pyramid"; anything else throws Error naming `source`.
MaskedImageFill parse_masked_image_fill(const std::string& name, const std::string& source);
std::string masked_image_fill_name(MaskedImageFill fill);

// image [3, H, W] in [-1, 1], pixel_mask [H, W] in {0, 1} (1 = regenerate) ->
// [tokens, 4 * latent_channels + 4 * f^2] float32.
at::Tensor fill_conditioning(const ImageAutoencoder& autoencoder, const at::Tensor& image,
                             const at::Tensor& pixel_mask, MaskedImageFill fill = MaskedImageFill::neutral);

}  // namespace flashps
