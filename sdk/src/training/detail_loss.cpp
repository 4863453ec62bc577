#include "training/detail_loss.h"

#include <ATen/ATen.h>

#include "core/error.h"

namespace flashps::training {

at::Tensor local_detail(const at::Tensor& pixels, int64_t window) {
  if (pixels.dim() != 3 || window < 1 || pixels.size(1) % window != 0 || pixels.size(2) % window != 0)
    throw Error("local_detail: expected [C, H, W] pixels with H and W multiples of the window " +
                std::to_string(window));
  // Differences padded with a zero at the far edge, so every pixel owns one pair per direction.
  const at::Tensor horizontal = at::constant_pad_nd(
      (pixels.narrow(2, 1, pixels.size(2) - 1) - pixels.narrow(2, 0, pixels.size(2) - 1)).abs(), {0, 1});
  const at::Tensor vertical = at::constant_pad_nd(
      (pixels.narrow(1, 1, pixels.size(1) - 1) - pixels.narrow(1, 0, pixels.size(1) - 1)).abs(), {0, 0, 0, 1});
  const at::Tensor per_pixel = (horizontal + vertical).mean(0, /*keepdim=*/true);  // [1, H, W]
  return at::avg_pool2d(per_pixel, {window, window}, {window, window})[0];
}

at::Tensor detail_matching_loss(const at::Tensor& predicted, const at::Tensor& truth, const at::Tensor& window_weight,
                                int64_t window) {
  const at::Tensor predicted_detail = local_detail(predicted, window);
  const at::Tensor truth_detail = local_detail(truth, window).detach();
  if (!window_weight.sizes().equals(predicted_detail.sizes()))
    throw Error("detail_matching_loss: window weights do not match the windows");
  // The floor keeps a flat photo region (no detail to match) from dividing by zero.
  const at::Tensor scale = (window_weight * truth_detail.pow(2)).sum().clamp_min(1e-6);
  return (window_weight * (predicted_detail - truth_detail).pow(2)).sum() / scale;
}

}  // namespace flashps::training
