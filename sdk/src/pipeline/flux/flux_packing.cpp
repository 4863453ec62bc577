#include "pipeline/flux/flux_packing.h"

#include <ATen/ATen.h>

namespace flashps {

at::Tensor pack_latents(const at::Tensor& latents) {
  const int64_t channels = latents.size(0), height = latents.size(1), width = latents.size(2);
  return latents.view({channels, height / 2, 2, width / 2, 2})
      .permute({1, 3, 0, 2, 4})
      .reshape({(height / 2) * (width / 2), channels * 4});
}

at::Tensor unpack_latents(const at::Tensor& tokens, int64_t latent_height, int64_t latent_width) {
  const int64_t channels = tokens.size(1) / 4;
  return tokens.reshape({latent_height / 2, latent_width / 2, channels, 2, 2})
      .permute({2, 0, 3, 1, 4})
      .reshape({channels, latent_height, latent_width});
}

at::Tensor flux_image_ids(int64_t latent_height, int64_t latent_width) {
  const int64_t rows = latent_height / 2, columns = latent_width / 2;
  at::Tensor row = at::arange(rows).repeat_interleave(columns);
  at::Tensor column = at::arange(columns).repeat({rows});
  return at::stack({at::zeros_like(row), row, column}, 1).to(at::kFloat);
}

at::Tensor pack_fill_mask(const at::Tensor& pixel_mask, int64_t vae_scale_factor) {
  const int64_t height = pixel_mask.size(0) / vae_scale_factor;
  const int64_t width = pixel_mask.size(1) / vae_scale_factor;
  at::Tensor blocks = pixel_mask.reshape({height, vae_scale_factor, width, vae_scale_factor})
                          .permute({1, 3, 0, 2})
                          .reshape({vae_scale_factor * vae_scale_factor, height, width});
  return pack_latents(blocks.contiguous());
}

}  // namespace flashps
