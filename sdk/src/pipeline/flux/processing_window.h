// Which part of an image a Flux edit processes, and at what size: the whole image when it fits
// the model's context size; else a square window around the mask with as much context again as
// the mask is large (at least the context size, shifted to stay inside the image), scaled down to
// the context size; or, without a mask (or for a whole-image template), the whole image scaled
// to fit. FluxInpaintPipeline::prepare and the work estimate at submission share it, so routing
// counts the tokens the edit will run.
#pragma once
#include "core/mask/mask_ops.h"

namespace flashps {

struct ProcessingWindow {
  int x = 0, y = 0, width = 0, height = 0;  // the part of the image processed
  int target_width = 0, target_height = 0;  // its size for the model, before rounding to tokens
  bool windowed = false;                    // a window around the mask
  bool scaled_whole = false;                // the whole image scaled to fit the context size
};

// `context` 0: no limit. `mask_box` in image pixels (empty: no mask).
ProcessingWindow processing_window(int width, int height, const PixelBox& mask_box, int context, bool whole_image);

}  // namespace flashps
