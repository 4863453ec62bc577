// A smooth classical fill of masked pixels from the kept ones ("push-pull" on an image pyramid,
// Gortler et al. 1996): kept pixels are averaged down a pyramid of halvings, then each level's
// holes take the bilinearly upsampled colour of the level above. Holes get a smooth field that
// continues the colours at their border, in a few milliseconds for any mask.
//
// Models trained with it (model_index.json "_flashps_masked_image_fill": "pyramid") see this
// fill instead of mid-grey in the masked image they are conditioned on, so the colour of a
// large hole comes from its own surroundings and a small model need not carry it across.
#pragma once
#include <ATen/Tensor.h>

namespace flashps {

// image [C, H, W], pixel_mask [H, W] (1 = fill, 0 = keep; fractions weigh a pixel as partly
// kept) -> [C, H, W]: kept pixels unchanged, masked ones filled. Everything masked -> zeros.
at::Tensor pyramid_fill(const at::Tensor& image, const at::Tensor& pixel_mask);

}  // namespace flashps
