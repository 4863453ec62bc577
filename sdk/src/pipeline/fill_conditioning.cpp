#include "pipeline/fill_conditioning.h"

#include <ATen/ATen.h>

#include "pipeline/flux_packing.h"

namespace flashps {

at::Tensor fill_conditioning(const ImageAutoencoder& autoencoder, const at::Tensor& image,
                             const at::Tensor& pixel_mask) {
  at::Tensor masked_image = image * (1 - pixel_mask).unsqueeze(0);
  at::Tensor masked_latents = pack_latents(autoencoder.encode_to_latents(masked_image.unsqueeze(0))[0]);
  return at::cat({masked_latents, pack_fill_mask(pixel_mask, autoencoder.scale_factor())}, 1).to(at::kFloat);
}

}  // namespace flashps
