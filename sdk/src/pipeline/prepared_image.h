// The image side of a prepared edit, the same for every family: the template as given, the part
// of it the model sees (a window around the mask, or the whole image) at the processing size, and
// the edit's mask in all its forms. The shared loop pastes the generated pixels back from this.
#pragma once
#include <ATen/Tensor.h>

#include <string>

#include "core/image/image.h"
#include "pipeline/prepared_mask.h"

namespace flashps {

struct PreparedImage {
  Image original;         // the template as given (RGB)
  // The part of the original the model sees: the whole image, or for images larger than the
  // model's context size a window around the mask (pasted back after decoding).
  bool windowed = false;
  int window_x = 0, window_y = 0, window_width = 0, window_height = 0;
  bool resized = false;   // processing size differs from the window
  int width = 0, height = 0;  // processing size
  at::Tensor image;       // [3, H, W] in [-1, 1], on the host
  PreparedMask mask;      // every form of the edit's mask (pipeline/prepared_mask.h)
  std::string template_hash;  // processed template pixels (the capture's identity)
};

}  // namespace flashps
