#include "pipeline/prepared_mask.h"

#include <ATen/ATen.h>

#include "core/mask/mask_ops.h"
#include "pipeline/image_tensors.h"

namespace flashps {

Image mask_values_at(const Image& mask, int width, int height) {
  check_image(mask, "mask");
  const bool resize = static_cast<int>(mask.width) != width || static_cast<int>(mask.height) != height;
  return mask_values(resize ? resize_nearest(mask, width, height) : mask);
}

Image edit_mask_at(const EditRequest& request, int width, int height, std::vector<std::string>& notes) {
  if (request.mask.empty()) return Image(width, height, 1, 0);
  const Image& mask = request.mask;
  if (static_cast<int>(mask.width) != width || static_cast<int>(mask.height) != height)
    notes.push_back("mask is " + std::to_string(mask.width) + "x" + std::to_string(mask.height) + ", image is " +
                    std::to_string(width) + "x" + std::to_string(height) + ": mask resized (nearest)");
  return binarize_mask(mask_values_at(mask, width, height));
}

PreparedMask prepare_mask(Image original, const Image& processed, int64_t latent_factor, int64_t pixels_per_token,
                          int64_t token_dilation) {
  PreparedMask mask;
  mask.original = std::move(original);
  mask.pixels = mask_to_tensor(processed);
  mask.latent = mask.pixels.slice(0, 0, {}, latent_factor).slice(1, 0, {}, latent_factor).contiguous();
  mask.tokens = engine::token_mask_from_pixels(mask.pixels, pixels_per_token, token_dilation);
  return mask;
}

double requested_mask_ratio(const EditRequest& request) {
  return request.mask.empty() ? 0.0 : mask_ratio(request.mask);
}

}  // namespace flashps
