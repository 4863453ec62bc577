// The tensors of one prepared edit request (internal to the Flux inpainting pipeline).
#pragma once
#include <ATen/Tensor.h>

#include <string>

#include "core/image.h"
#include "pipeline/flux_inpaint_pipeline.h"
#include "pipeline/prepared_mask.h"

namespace flashps {

struct FluxInpaintPipeline::Prepared {
  Image original;         // the template as given (RGB)
  bool resized = false;   // processing size differs from the context window
  // The part of the original the model sees: the whole image, or for images larger than the
  // model's native size a window around the mask (pasted back after decoding).
  int window_x = 0, window_y = 0, window_width = 0, window_height = 0;
  bool windowed = false;
  int width = 0, height = 0;
  int64_t latent_height = 0, latent_width = 0;
  at::Tensor image;       // [3, H, W] in [-1, 1]
  PreparedMask mask;      // every form of the edit's mask (pipeline/prepared_mask.h)
  at::Tensor prompt_embeds, pooled_prompt_embeds;
  std::string template_hash;  // processed template pixels
};

}  // namespace flashps
