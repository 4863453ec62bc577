// Flux's latent layout: 2x2 latent patches packed into channels (diffusers _pack_latents /
// _unpack_latents), the matching img_ids, and Fill conditioning packing of the pixel mask.
#pragma once
#include <ATen/Tensor.h>

namespace flashps {

// latents [C, h, w] -> tokens [(h/2)*(w/2), C*4]
at::Tensor pack_latents(const at::Tensor& latents);
// tokens [(h/2)*(w/2), C*4] -> latents [C, h, w]
at::Tensor unpack_latents(const at::Tensor& tokens, int64_t latent_height, int64_t latent_width);
// [(h/2)*(w/2), 3]: (0, row, column) of each packed token, float32.
at::Tensor flux_image_ids(int64_t latent_height, int64_t latent_width);
// FluxFillPipeline.prepare_mask_latents: pixel mask [H, W] in {0,1} -> [(h/2)*(w/2), vsf^2*4]
// where each latent pixel's vsf x vsf block of mask pixels becomes its channels.
at::Tensor pack_fill_mask(const at::Tensor& pixel_mask, int64_t vae_scale_factor);

}  // namespace flashps
