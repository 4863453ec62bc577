// The tensors of one prepared edit request (internal to the Flux inpainting pipeline): the shared
// image side (pipeline/prepared_image.h) and Flux's latent grid and prompt embeddings.
#pragma once
#include <ATen/Tensor.h>

#include "pipeline/flux/flux_inpaint_pipeline.h"
#include "pipeline/prepared_image.h"

namespace flashps {

struct FluxInpaintPipeline::Prepared : PreparedImage {
  int64_t latent_height = 0, latent_width = 0;
  at::Tensor prompt_embeds, pooled_prompt_embeds;
};

}  // namespace flashps
