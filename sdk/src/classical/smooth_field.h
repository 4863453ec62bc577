// A Gaussian blur of a large image, held at reduced resolution and read back at full resolution
// only where it is needed (texture transfer's shape/detail split).
//
// A blur of sigma s removes everything finer than about s, so it is computed on the image
// area-averaged by a factor f ~ s / 3 (sigma s / f there, a few taps) and read back by bilinear
// interpolation: the cost is that of a few passes over the pixels whatever s is, where a direct
// blur costs 6 s taps per pixel. The sigma used at low resolution is reduced so that, with the
// averaging and the interpolation, the effective blur is s. With f = 1 (s < 6) the blur is exact.
#pragma once
#include <ATen/Tensor.h>

#include <vector>

namespace flashps {

class SmoothField {
 public:
  // image [C, H, W] blurred with edges replicated, readable over [-pad, H + pad) x [-pad, W + pad).
  static SmoothField blurred(const at::Tensor& image, double sigma, int64_t pad);
  // blur(image * weight) / blur(weight) with weight [H, W] in [0, 1] (float or bool) and both zero
  // outside the image: the colours of the weighted pixels, continued smoothly; same extent.
  static SmoothField normalized(const at::Tensor& image, const at::Tensor& weight, double sigma, int64_t pad);

  // The field at full resolution over rows [y, y + height), columns [x, x + width): [C, h, w].
  at::Tensor region(int64_t y, int64_t x, int64_t height, int64_t width) const;
  // Means of the field over the boxes [rows[i], rows[i] + size) x [columns[j], columns[j] + size):
  // [C, rows, columns]. Exact for the interpolated field, without reading it at full resolution.
  at::Tensor box_means(const std::vector<int64_t>& rows, const std::vector<int64_t>& columns, int64_t size) const;

  int64_t factor() const { return factor_; }

 private:
  SmoothField(at::Tensor low, int64_t factor, int64_t origin)
      : low_(std::move(low)), factor_(factor), origin_(origin) {}
  // [starts, low-resolution size] interpolation weights averaged over [start, start + size).
  at::Tensor averaged_weights(const std::vector<int64_t>& starts, int64_t size, int64_t axis_length) const;

  at::Tensor low_;      // [C, h, w]; low pixel i covers full-resolution [origin + i f, origin + (i + 1) f)
  int64_t factor_ = 1;  // f
  int64_t origin_ = 0;  // full-resolution coordinate of the low image's first pixel edge (both axes)
};

}  // namespace flashps
