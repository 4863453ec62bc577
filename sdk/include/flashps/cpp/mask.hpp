// FlashPS C++ wrapper, part of <flashps/flashps.hpp> (include that).
// Mask painting: strokes, polygons, fills, grow/feather, bounds.
#ifndef FLASHPS_CPP_MASK_HPP
#define FLASHPS_CPP_MASK_HPP

#include <cstdint>
#include <vector>

#include "flashps/cpp/common.hpp"

namespace flashps::sdk {

struct Rect {
  int32_t x = 0, y = 0, width = 0, height = 0;
  bool empty() const { return width <= 0 || height <= 0; }
  static Rect from_c(const flashps_rect& r) { return {r.x, r.y, r.width, r.height}; }
  flashps_rect to_c() const { return {x, y, width, height}; }
};

struct Brush {
  double diameter = 32, hardness = 0.8, spacing = 0.15;
  bool erase = false;
  flashps_brush to_c() const {
    flashps_brush brush = flashps_brush_default();
    brush.diameter = diameter;
    brush.hardness = hardness;
    brush.erase = erase ? 1 : 0;
    brush.spacing = spacing;
    return brush;
  }
};

struct Point {
  double x = 0, y = 0;
};

// A stroke painting into `mask` (1 channel); the mask's pixels must not be reallocated meanwhile.
class MaskStroke {
 public:
  MaskStroke(Image& mask, const Brush& brush, double x, double y) {
    flashps_image view = mask.view();
    const flashps_brush c_brush = brush.to_c();
    flashps_mask_stroke* stroke = nullptr;
    flashps_rect changed{};
    check(flashps_mask_stroke_begin(&view, &c_brush, x, y, &stroke, &changed));
    handle_.reset(stroke);
    first_ = Rect::from_c(changed);
  }
  Rect first_dab() const { return first_; }
  Rect extend(double x, double y) {
    flashps_rect changed{};
    check(flashps_mask_stroke_extend(handle_.get(), x, y, &changed));
    return Rect::from_c(changed);
  }
  // Everything the stroke touched; the stroke is finished.
  Rect end() {
    flashps_rect changed{};
    flashps_mask_stroke_end(handle_.release(), &changed);
    return Rect::from_c(changed);
  }

 private:
  struct Deleter {
    void operator()(flashps_mask_stroke* stroke) const { flashps_mask_stroke_end(stroke, nullptr); }
  };
  std::unique_ptr<flashps_mask_stroke, Deleter> handle_;
  Rect first_;
};

namespace mask {
// The SDK's rule for what an image means as a mask (flashps_mask_from_image: brightest channel,
// times alpha, or alpha alone for alpha-only strokes), as a 1-channel image.
inline Image from_image(const Image& image) {
  const flashps_image view = image.view();
  flashps_image out{};
  check(flashps_mask_from_image(&view, &out));
  return Image::adopt(out);
}
// The mask an edit of a width x height image reads from `image` (flashps_mask_for_image: resized
// with nearest neighbour as edits do, then from_image's values; >= 128 is regenerated).
inline Image for_image(const Image& image, uint32_t width, uint32_t height) {
  const flashps_image view = image.view();
  flashps_image out{};
  check(flashps_mask_for_image(&view, width, height, &out));
  return Image::adopt(out);
}
inline Rect fill_rect(Image& mask, const Rect& rect, uint8_t value) {
  flashps_image view = mask.view();
  flashps_rect changed{};
  check(flashps_mask_fill_rect(&view, rect.to_c(), value, &changed));
  return Rect::from_c(changed);
}
inline Rect fill_polygon(Image& mask, const std::vector<Point>& polygon, uint8_t value) {
  std::vector<double> points;
  points.reserve(polygon.size() * 2);
  for (const Point& point : polygon) {
    points.push_back(point.x);
    points.push_back(point.y);
  }
  flashps_image view = mask.view();
  flashps_rect changed{};
  check(flashps_mask_fill_polygon(&view, points.data(), polygon.size(), value, &changed));
  return Rect::from_c(changed);
}
inline void invert(Image& mask) {
  flashps_image view = mask.view();
  check(flashps_mask_invert(&view));
}
inline void clear(Image& mask) {
  flashps_image view = mask.view();
  check(flashps_mask_clear(&view));
}
inline void fill(Image& mask) {
  flashps_image view = mask.view();
  check(flashps_mask_fill(&view));
}
inline Image effective(const Image& mask, int grow_pixels, int feather_pixels) {
  const flashps_image view = mask.view();
  flashps_image out{};
  check(flashps_mask_effective(&view, grow_pixels, feather_pixels, &out));
  return Image::adopt(out);
}
inline Rect bounds(const Image& mask) {
  const flashps_image view = mask.view();
  flashps_rect box{};
  check(flashps_mask_bounds(&view, &box));
  return Rect::from_c(box);
}
}  // namespace mask

}  // namespace flashps::sdk

#endif  // FLASHPS_CPP_MASK_HPP
