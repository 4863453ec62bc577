// A Stable Diffusion edit in flight (internal to the SD pipeline): the shared loop's state
// (pipeline/inpaint_job.h) plus the UNet's conditioning: the latent mask and masked-image latents
// of 9-channel UNets, the prompt context (SDXL: pooled embeddings and time ids) and guidance.
#pragma once
#include <ATen/Tensor.h>

#include "pipeline/inpaint_job.h"
#include "pipeline/prepared_image.h"

namespace flashps {

struct SDEditJob final : InpaintJob {
  PreparedImage prepared;
  PreparedImage& prepared_image() override { return prepared; }

  at::Tensor latent_mask;            // prepared.mask.latent as the UNet takes it: [1, 1, h, w]
  at::Tensor masked_image_latents;   // [1, C, h, w] (9-channel UNets)
  at::Tensor context, text_embeds, time_ids;  // [rows, 77, D], SDXL [rows, P], [rows, 6]
  bool guided = false;
  double guidance = 7.5;

  int rows() const override { return guided ? 2 : 1; }  // UNet batch rows (classifier-free guidance)
};

}  // namespace flashps
