#include "classical/pyramid_fill.h"

#include <ATen/ATen.h>

#include <vector>

#include "core/diagnostics/error.h"

namespace flashps {

at::Tensor pyramid_fill(const at::Tensor& image, const at::Tensor& pixel_mask) {
  if (image.dim() != 3 || pixel_mask.dim() != 2 || image.size(1) != pixel_mask.size(0) ||
      image.size(2) != pixel_mask.size(1))
    throw Error("pyramid fill: expected an image [C, H, W] and a mask [H, W] of the same size");
  // Each level holds the kept fraction of every cell and the kept colour premultiplied by it.
  at::Tensor kept = (1 - pixel_mask.to(at::kFloat)).clamp(0, 1).unsqueeze(0).unsqueeze(0);
  std::vector<at::Tensor> fractions = {kept};
  std::vector<at::Tensor> premultiplied = {image.to(at::kFloat).unsqueeze(0) * kept};
  while (fractions.back().size(2) > 1 || fractions.back().size(3) > 1) {
    // ceil_mode keeps odd borders; count_include_pad=false averages only real pixels.
    auto halve = [](const at::Tensor& level) { return at::avg_pool2d(level, {2, 2}, {2, 2}, {0, 0}, true, false); };
    premultiplied.push_back(halve(premultiplied.back()));
    fractions.push_back(halve(fractions.back()));
  }
  at::Tensor colour = at::where(fractions.back() > 0, premultiplied.back() / fractions.back().clamp_min(1e-12),
                                at::zeros_like(premultiplied.back()));
  for (int64_t level = static_cast<int64_t>(fractions.size()) - 2; level >= 0; --level) {
    const at::Tensor& fraction = fractions[level];
    at::Tensor above = at::upsample_bilinear2d(colour, {fraction.size(2), fraction.size(3)}, false);
    colour = premultiplied[level] + (1 - fraction) * above;
  }
  return colour[0].to(image.scalar_type());
}

}  // namespace flashps
