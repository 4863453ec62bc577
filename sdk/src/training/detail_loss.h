// A texture loss for the trainer: the local amount of fine detail in a decoded prediction must
// match the photo's, wherever the detail lies. A per-pixel loss (the latent MSE, the edge loss)
// is minimised by the average of all textures that could fill a hole, which is flat; matching
// detail energy per window instead rewards a fill as textured as its surroundings without asking
// for the exact grain of the photo, which the model cannot know.
#pragma once
#include <ATen/Tensor.h>

namespace flashps::training {

// Mean absolute horizontal plus vertical neighbour difference of `pixels` [C, H, W], averaged over
// channels and over each `window` x `window` block: [H / window, W / window].
at::Tensor local_detail(const at::Tensor& pixels, int64_t window);

// sum w (D(predicted) - D(truth))^2 / sum w D(truth)^2, D = local_detail per window, w =
// `window_weight` [H / window, W / window] (e.g. 1 on masked tokens). 0 when the detail matches;
// about 1 for a flat prediction of a textured photo. Differentiable in `predicted`.
at::Tensor detail_matching_loss(const at::Tensor& predicted, const at::Tensor& truth, const at::Tensor& window_weight,
                                int64_t window);

}  // namespace flashps::training
