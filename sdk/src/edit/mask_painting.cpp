#include "edit/mask_painting.h"

#include <algorithm>
#include <cmath>

#include "core/diagnostics/error.h"

namespace flashps::edit {
namespace {

void check_mask(const Image& mask, const char* what) {
  check_image(mask, what);
  if (mask.channels != 1) throw Error(std::string(what) + ": the mask must have 1 channel");
}

void check_view(const MaskView& mask, const char* what) {
  if (!mask.pixels || mask.width <= 0 || mask.height <= 0)
    throw Error(std::string(what) + ": the mask has no pixels");
}

PixelBox clip(const PixelBox& box, const MaskView& mask) {
  const int x0 = std::max(0, box.x), y0 = std::max(0, box.y);
  const int x1 = std::min(mask.width, box.x + box.w), y1 = std::min(mask.height, box.y + box.h);
  if (x1 <= x0 || y1 <= y0) return {};
  return {x0, y0, x1 - x0, y1 - y0};
}

}  // namespace

MaskView view_of(Image& mask, const char* what) {
  check_mask(mask, what);
  return {mask.width, mask.height, mask.pixels.data()};
}

PixelBox union_box(const PixelBox& a, const PixelBox& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  const int x0 = std::min(a.x, b.x), y0 = std::min(a.y, b.y);
  const int x1 = std::max(a.x + a.w, b.x + b.w), y1 = std::max(a.y + a.h, b.y + b.h);
  return {x0, y0, x1 - x0, y1 - y0};
}

double brush_coverage(const Brush& brush, double distance) {
  const double radius = std::max(0.5, brush.diameter / 2);
  // A one-pixel linear ramp at the edge anti-aliases even a fully hard brush.
  const double hard_radius = std::clamp(brush.hardness, 0.0, 1.0) * radius;
  if (distance <= hard_radius - 0.5) return 1.0;
  if (distance >= radius + 0.5) return 0.0;
  if (radius - hard_radius < 1.0) return std::clamp(radius + 0.5 - distance, 0.0, 1.0);
  const double t = std::clamp((distance - hard_radius) / (radius - hard_radius), 0.0, 1.0);
  return 1.0 - t * t * (3 - 2 * t);  // smoothstep: no visible ring where the falloff starts
}

PixelBox stamp_dab(Image& mask, double x, double y, const Brush& brush) {
  return stamp_dab(view_of(mask, "stamp_dab"), x, y, brush);
}

PixelBox stamp_dab(const MaskView& mask, double x, double y, const Brush& brush) {
  check_view(mask, "stamp_dab");
  const double reach = std::max(0.5, brush.diameter / 2) + 0.5;
  const int x0 = static_cast<int>(std::floor(x - reach)), y0 = static_cast<int>(std::floor(y - reach));
  const int x1 = static_cast<int>(std::ceil(x + reach)), y1 = static_cast<int>(std::ceil(y + reach));
  const PixelBox box = clip({x0, y0, x1 - x0, y1 - y0}, mask);
  for (int py = box.y; py < box.y + box.h; ++py) {
    for (int px = box.x; px < box.x + box.w; ++px) {
      const double coverage = brush_coverage(brush, std::hypot(px + 0.5 - x, py + 0.5 - y));
      if (coverage <= 0) continue;
      const auto level = static_cast<uint8_t>(std::lround(255 * coverage));
      uint8_t& value = mask.at(px, py);
      value = brush.erase ? std::min<uint8_t>(value, 255 - level) : std::max(value, level);
    }
  }
  return box;
}

PixelBox MaskStroke::begin(double x, double y) {
  started_ = true;
  last_x_ = x;
  last_y_ = y;
  carried_ = 0;
  changed_ = union_box(changed_, stamp_dab(mask_, x, y, brush_));
  return changed_;
}

PixelBox MaskStroke::extend(double x, double y) {
  if (!started_) return begin(x, y);
  const double spacing = std::max(1.0, brush_.spacing * brush_.diameter);
  const double dx = x - last_x_, dy = y - last_y_;
  const double length = std::hypot(dx, dy);
  PixelBox touched;
  double walked = spacing - carried_;  // where the next dab falls along this segment
  for (; walked <= length; walked += spacing) {
    const double t = walked / length;
    touched = union_box(touched, stamp_dab(mask_, last_x_ + t * dx, last_y_ + t * dy, brush_));
  }
  carried_ = length - (walked - spacing);
  last_x_ = x;
  last_y_ = y;
  changed_ = union_box(changed_, touched);
  return touched;
}

PixelBox fill_rectangle(Image& mask, const PixelBox& box, uint8_t value) {
  return fill_rectangle(view_of(mask, "fill_rectangle"), box, value);
}

PixelBox fill_rectangle(const MaskView& mask, const PixelBox& box, uint8_t value) {
  check_view(mask, "fill_rectangle");
  const PixelBox inside = clip(box, mask);
  for (int y = inside.y; y < inside.y + inside.h; ++y)
    std::fill_n(&mask.at(inside.x, y), inside.w, value);
  return inside;
}

PixelBox fill_polygon(Image& mask, const std::vector<Point>& polygon, uint8_t value) {
  return fill_polygon(view_of(mask, "fill_polygon"), polygon, value);
}

PixelBox fill_polygon(const MaskView& mask, const std::vector<Point>& polygon, uint8_t value) {
  check_view(mask, "fill_polygon");
  if (polygon.size() < 3) return {};
  double min_y = polygon[0].y, max_y = polygon[0].y;
  for (const Point& p : polygon) {
    min_y = std::min(min_y, p.y);
    max_y = std::max(max_y, p.y);
  }
  const int first_row = std::max(0, static_cast<int>(std::floor(min_y))),
            last_row = std::min(mask.height - 1, static_cast<int>(std::ceil(max_y)));
  PixelBox changed;
  std::vector<double> crossings;
  for (int y = first_row; y <= last_row; ++y) {
    const double cy = y + 0.5;  // sample at pixel centres
    crossings.clear();
    for (size_t i = 0; i < polygon.size(); ++i) {
      const Point& a = polygon[i];
      const Point& b = polygon[(i + 1) % polygon.size()];
      // Half-open in y so a vertex on the scan line counts once.
      if ((a.y <= cy) != (b.y <= cy)) crossings.push_back(a.x + (cy - a.y) * (b.x - a.x) / (b.y - a.y));
    }
    std::sort(crossings.begin(), crossings.end());
    for (size_t i = 0; i + 1 < crossings.size(); i += 2) {
      // Pixels whose centre x + 0.5 lies in [left, right).
      const int x0 = std::max(0, static_cast<int>(std::ceil(crossings[i] - 0.5)));
      const int x1 = std::min(mask.width, static_cast<int>(std::ceil(crossings[i + 1] - 0.5)));
      if (x1 <= x0) continue;
      std::fill_n(&mask.at(x0, y), x1 - x0, value);
      changed = union_box(changed, {x0, y, x1 - x0, 1});
    }
  }
  return changed;
}

void invert_mask(Image& mask) {
  check_mask(mask, "invert_mask");
  for (uint8_t& value : mask.pixels) value = 255 - value;
}

void clear_mask(Image& mask) {
  check_mask(mask, "clear_mask");
  std::fill(mask.pixels.begin(), mask.pixels.end(), 0);
}

void fill_mask(Image& mask) {
  check_mask(mask, "fill_mask");
  std::fill(mask.pixels.begin(), mask.pixels.end(), 255);
}

Image effective_mask(const Image& mask, int grow_pixels, int feather_pixels) {
  // As the pipeline's paste-back: binarized at 128, then grown, then feathered.
  Image alpha = binarize_mask(mask);
  if (grow_pixels > 0) alpha = grow_mask(alpha, grow_pixels);
  if (feather_pixels > 0) alpha = feather_mask(alpha, feather_pixels);
  return alpha;
}

}  // namespace flashps::edit
