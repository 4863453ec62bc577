#include "training/detail_loss.h"

#include <ATen/ATen.h>

#include "core/diagnostics/error.h"

namespace flashps::training {

namespace {

// |x[i+1] - x[i]| along `dim`, zero-padded at the far edge so every pixel owns one pair, and
// zeroed where the pair straddles a seam; returns the steps and which pairs count ([length]).
std::pair<at::Tensor, at::Tensor> neighbour_steps(const at::Tensor& pixels, int64_t dim, int64_t seam) {
  const int64_t length = pixels.size(dim);
  at::Tensor counted = at::ones({length}, pixels.options());
  counted[length - 1] = 0;
  if (seam > 0)
    for (int64_t i = seam - 1; i < length; i += seam) counted[i] = 0;
  const at::Tensor steps =
      (pixels.narrow(dim, 1, length - 1) - pixels.narrow(dim, 0, length - 1)).abs();
  const at::Tensor padded = dim == 2 ? at::constant_pad_nd(steps, {0, 1}) : at::constant_pad_nd(steps, {0, 0, 0, 1});
  const at::Tensor shape_of_counted = dim == 2 ? counted.view({1, 1, length}) : counted.view({1, length, 1});
  return {padded * shape_of_counted, shape_of_counted};
}

}  // namespace

at::Tensor local_detail(const at::Tensor& pixels, int64_t window, int64_t seam) {
  if (pixels.dim() != 3 || window < 1 || pixels.size(1) % window != 0 || pixels.size(2) % window != 0)
    throw Error("local_detail: expected [C, H, W] pixels with H and W multiples of the window " +
                std::to_string(window));
  const auto [horizontal, horizontal_counted] = neighbour_steps(pixels, 2, seam);
  const auto [vertical, vertical_counted] = neighbour_steps(pixels, 1, seam);
  const at::Tensor step_sum = (horizontal + vertical).mean(0, /*keepdim=*/true);  // [1, H, W]
  const at::Tensor pair_count = (horizontal_counted + vertical_counted).expand({1, pixels.size(1), pixels.size(2)});
  // Steps per counted pair, so windows along the image edge or next to seams are not diluted.
  const at::Tensor step_total = at::avg_pool2d(step_sum, {window, window}, {window, window})[0];
  const at::Tensor pair_total = at::avg_pool2d(pair_count, {window, window}, {window, window})[0];
  return 2 * step_total / pair_total.clamp_min(1e-6);
}

at::Tensor detail_matching_loss(const at::Tensor& predicted, const at::Tensor& truth, const at::Tensor& window_weight,
                                int64_t window, int64_t seam, double floor) {
  const at::Tensor predicted_detail = local_detail(predicted, window, seam);
  const at::Tensor truth_detail = local_detail(truth, window, seam).detach();
  if (!window_weight.sizes().equals(predicted_detail.sizes()))
    throw Error("detail_matching_loss: window weights do not match the windows");
  const at::Tensor log_ratio = at::log(predicted_detail + floor) - at::log(truth_detail + floor);
  return (window_weight * log_ratio.pow(2)).sum() / window_weight.sum().clamp_min(1e-6);
}

}  // namespace flashps::training
