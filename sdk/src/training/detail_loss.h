// A texture loss for the trainer: the local amount of fine detail in a decoded prediction must
// match the photo's, wherever the detail lies. A per-pixel loss (the latent MSE, the edge loss)
// is minimised by the average of all textures that could fill a hole, which is flat; matching
// detail energy per window instead rewards a fill as textured as its surroundings without asking
// for the exact grain of the photo, which the model cannot know.
#pragma once
#include <ATen/Tensor.h>

namespace flashps::training {

// Mean absolute horizontal plus vertical neighbour difference of `pixels` [C, H, W], averaged over
// channels and over each `window` x `window` block: [H / window, W / window]. With `seam` > 0 the
// steps between pixels on either side of a multiple of `seam` are left out: a block decoder's
// seams are smoothed by its deblocking filter after decoding and are not texture.
at::Tensor local_detail(const at::Tensor& pixels, int64_t window, int64_t seam = 0);

// Weighted mean over windows of (log(D(predicted) + floor) - log(D(truth) + floor))^2, D =
// local_detail, weights `window_weight` [H / window, W / window] (e.g. 1 on masked tokens). 0 when
// the detail matches. On a log scale, too little and too much detail cost alike, and a smooth
// photo region (sky) does not blow up the loss the way a relative error would; `floor` (in pixel
// units) is the detail below which differences stop mattering. Differentiable in `predicted`.
at::Tensor detail_matching_loss(const at::Tensor& predicted, const at::Tensor& truth, const at::Tensor& window_weight,
                                int64_t window, int64_t seam = 0, double floor = 0.01);

}  // namespace flashps::training
