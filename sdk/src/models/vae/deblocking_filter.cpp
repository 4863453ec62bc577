#include "models/vae/deblocking_filter.h"

#include <ATen/ATen.h>

#include <vector>

#include "core/diagnostics/error.h"

namespace flashps {
namespace {

// Filters the borders crossed when moving along `dim` (3: columns, 2: rows).
at::Tensor filter_along(const at::Tensor& image, int64_t dim, const DeblockingFilter& filter) {
  const int64_t size = image.size(dim), half = filter.block / 2;
  std::vector<int64_t> borders;  // index of the first pixel after each border
  for (int64_t border = filter.block; border + half <= size; border += filter.block) borders.push_back(border);
  if (borders.empty()) return image;
  const at::Tensor first_after = at::tensor(borders, at::kLong).to(image.device());
  auto before = [&](int64_t i) { return image.index_select(dim, first_after - (1 + i)); };
  auto after = [&](int64_t i) { return image.index_select(dim, first_after + i); };
  const at::Tensor p0 = before(0), p1 = before(1), q0 = after(0), q1 = after(1);
  at::Tensor step = q0 - p0;
  const at::Tensor artefact = (step.abs() < filter.edge_threshold) & ((p1 - p0).abs() < filter.flatness_threshold) &
                              ((q1 - q0).abs() < filter.flatness_threshold);
  step = step * artefact;
  at::Tensor filtered = image.clone();
  // Weights (half - i) / (block + 1): the step becomes a ramp of block + 1 equal increments.
  for (int64_t i = 0; i < half; ++i) {
    const double weight = double(half - i) / double(filter.block + 1);
    filtered.index_copy_(dim, first_after - (1 + i), before(i) + step * weight);
    filtered.index_copy_(dim, first_after + i, after(i) - step * weight);
  }
  return filtered;
}

}  // namespace

at::Tensor apply_deblocking_filter(const at::Tensor& image, const DeblockingFilter& filter) {
  if (!filter.enabled()) return image;
  if (filter.block < 4 || filter.block % 2 != 0) throw Error("deblocking filter: block must be even and at least 4");
  if (image.dim() != 4) throw Error("deblocking filter: expected an image [B, C, H, W]");
  return filter_along(filter_along(image, 3, filter), 2, filter);
}

}  // namespace flashps
