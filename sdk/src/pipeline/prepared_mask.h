// An edit's mask, interpreted once. The SDK's one rule (core/mask/mask_ops.h: mask_values >= 128,
// luma and alpha as documented there) binarises the request's mask at the image's size, and
// every form an edit needs is derived from that binary mask here, so estimation, replay,
// conditioning, latent blending, texture transfer and compositing all read the same pixels.
//
// A front end's mask travels one way: request.mask -> edit_mask_at() -> (window, resize) ->
// prepare_mask() -> PreparedMask.tokens -> engine::ReplaySession -> the model's token router.
#pragma once
#include <ATen/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/image/image.h"
#include "engine/token_mask.h"
#include "pipeline/edit_types.h"

namespace flashps {

struct PreparedMask {
  Image original;            // 0/255 at the input's size: texture transfer, compositing
  at::Tensor pixels;         // [H, W] float {0, 1} at the processing size: conditioning
  at::Tensor latent;         // [H/f, W/f] float {0, 1}: each latent's top-left pixel, as
                             // diffusers' nearest resize samples it (latent blending)
  engine::TokenMask tokens;  // a token is masked when any of its pixels is, plus the request's
                             // token dilation: what replay computes and what stats report
  double ratio() const { return tokens.ratio(); }
};

// A mask image's values (core/mask/mask_ops.h mask_values) at width x height: resized (nearest) first
// when its size differs, so the alpha-only test sees the pixels the edit keeps. What
// flashps_mask_for_image returns; edit_mask_at regenerates where it is >= 128.
Image mask_values_at(const Image& mask, int width, int height);

// The request's mask as 0/255 at width x height: empty when the request has none; a mask of
// another size is resized (nearest), with a note.
Image edit_mask_at(const EditRequest& request, int width, int height, std::vector<std::string>& notes);

// The processed forms of `original` (edit_mask_at's result), given the same mask cropped and
// resized to the processing size (`processed`, 0/255). latent_factor: pixels per latent;
// pixels_per_token: pixels per model token (a multiple of latent_factor).
PreparedMask prepare_mask(Image original, const Image& processed, int64_t latent_factor, int64_t pixels_per_token,
                          int64_t token_dilation);

// The share of an image the request's mask marks, before any processing: the estimate serving
// routes by, read by the same rule as the edit (0 without a mask).
double requested_mask_ratio(const EditRequest& request);

}  // namespace flashps
