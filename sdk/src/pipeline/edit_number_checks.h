// The edit's numbers whose sensible range depends on its image, checked once the image is known
// (the C API checks the image-independent bounds first): grow and feather reach at most across
// the image, token dilation at most across the token grid. Beyond that they only cost time, or
// (a feather wider than the image) fade the whole paste-back mask and return the input unchanged.
#pragma once

namespace flashps {

struct EditRequest;

// Throws InvalidArgumentError "mask_feather_pixels is 5000; for this 256x256 image it must be 0
// to 256" (likewise mask_grow_pixels, and token_dilation against the grid_width x grid_height
// token grid).
void check_mask_settings(const EditRequest& request, int width, int height, int grid_width, int grid_height);

}  // namespace flashps
