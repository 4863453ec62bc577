// Image quality metrics (float tensors [C, H, W] with a known data range).
#pragma once
#include <ATen/Tensor.h>

namespace flashps {

// Mean SSIM (Wang et al. 2004: 11x11 Gaussian window, sigma 1.5, K1 0.01, K2 0.03), averaged
// over channels and valid window positions. `weight` [H, W] (optional) restricts the mean to a
// region, e.g. the masked area.
double ssim(const at::Tensor& a, const at::Tensor& b, double data_range,
            const at::Tensor& weight = at::Tensor());
// PSNR in dB over the pixels where `weight` > 0 (all if undefined).
double psnr(const at::Tensor& a, const at::Tensor& b, double data_range,
            const at::Tensor& weight = at::Tensor());
// Blockiness: the mean absolute difference between neighbouring pixels across the borders of a
// `block`-pixel grid, divided by the same mean between neighbours inside blocks, over pairs
// whose both pixels have `weight` > 0 (all if undefined). About 1 for photos; larger where an
// image is a mosaic of blocks. NaN without pairs of either kind.
double block_step_ratio(const at::Tensor& image, int64_t block, const at::Tensor& weight = at::Tensor());
// Fine detail: the mean absolute difference between horizontally and vertically neighbouring
// pixels (averaged over channels), over pairs whose both pixels have `weight` > 0 (all if
// undefined). 0 for a flat image; compare a fill's value with the ground truth's to see whether
// it carries the photo's texture or only its colours. NaN without pairs.
double detail_energy(const at::Tensor& image, const at::Tensor& weight = at::Tensor());

}  // namespace flashps
