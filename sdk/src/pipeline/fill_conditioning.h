// Flux Fill conditioning, exactly as diffusers' FluxFillPipeline prepares it: the latents of the
// masked image (masked pixels set to 0, mid-grey in [-1, 1]) and the pixel mask folded to latent
// resolution, both packed into tokens. Shared by the inpainting pipeline and the trainer.
#pragma once
#include <ATen/Tensor.h>

#include "models/vae/image_autoencoder.h"

namespace flashps {

// image [3, H, W] in [-1, 1], pixel_mask [H, W] in {0, 1} (1 = regenerate) ->
// [tokens, 4 * latent_channels + 4 * f^2] float32.
at::Tensor fill_conditioning(const ImageAutoencoder& autoencoder, const at::Tensor& image,
                             const at::Tensor& pixel_mask);

}  // namespace flashps
