// Conversions between 8-bit images and the tensors the models take.
#pragma once
#include <ATen/Tensor.h>

#include "core/image/image.h"

namespace flashps {

// RGB image -> [3, H, W] float32 in [-1, 1] (diffusers VaeImageProcessor normalisation).
at::Tensor image_to_tensor(const Image& image);
// [3, H, W] in [-1, 1] -> RGB image (clamped, rounded as diffusers' pt_to_numpy * 255 round).
Image tensor_to_image(const at::Tensor& tensor);
// Mask image (any channels) -> [H, W] float32 in {0, 1}, binarised at 0.5 (white = edit).
at::Tensor mask_to_tensor(const Image& mask);

}  // namespace flashps
