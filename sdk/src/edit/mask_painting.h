// Mask editing for interactive front ends (the desktop app, the C API, plugin hosts): brush dabs
// with size and hardness, strokes interpolated between pointer samples, rectangle and polygon
// (lasso) fills, invert, clear, fill. Plain C++ on 1-channel 8-bit masks (255 = regenerate), no
// UI toolkit, so every front end paints exactly the same pixels. Painting works in place on a
// MaskView (pixels wherever they live: an Image, or a C caller's buffer), so a stroke on a large
// mask touches only the pixels under its dabs; the Image overloads are the same functions.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/image/image.h"
#include "core/mask/mask_ops.h"

namespace flashps::edit {

// A 1-channel mask's pixels, borrowed: row-major, no padding. The owner keeps them alive (and
// does not reallocate them) while the view is used.
struct MaskView {
  int width = 0, height = 0;
  uint8_t* pixels = nullptr;
  uint8_t& at(int x, int y) const {
    return pixels[static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)];
  }
  size_t size() const { return static_cast<size_t>(width) * static_cast<size_t>(height); }
};

// Throws Error("<what>: ...") unless `mask` is a valid 1-channel image.
MaskView view_of(Image& mask, const char* what);

struct Brush {
  double diameter = 32;  // pixels
  // Fraction of the radius painted at full strength; the rest falls off smoothly to 0 at the
  // edge. 1 = hard disc (anti-aliased edge only), 0 = soft all the way from the centre.
  double hardness = 0.8;
  bool erase = false;   // lower the mask instead of raising it
  double spacing = 0.15;  // distance between dabs in a stroke, as a fraction of the diameter
};

// Coverage 0..1 of a dab of `brush` at distance `distance` from its centre.
double brush_coverage(const Brush& brush, double distance);

// One dab centred at (x, y) in pixel coordinates (pixel i covers [i, i + 1), centre i + 0.5).
// Painting keeps the larger of the old value and the coverage, erasing the smaller of the old
// value and 1 - coverage, so overlapping dabs of one stroke never build up past the brush.
// Returns the box of pixels it may have changed (clipped to the mask; empty if none).
PixelBox stamp_dab(const MaskView& mask, double x, double y, const Brush& brush);
PixelBox stamp_dab(Image& mask, double x, double y, const Brush& brush);

// A stroke: dabs every `spacing * diameter` pixels (at least one pixel) along the pointer path,
// carrying the remainder across segments so a slow drag and a fast one paint the same line.
// The mask must outlive the stroke and keep its size.
class MaskStroke {
 public:
  MaskStroke(const MaskView& mask, Brush brush) : mask_(mask), brush_(brush) {}
  MaskStroke(Image& mask, Brush brush) : MaskStroke(view_of(mask, "mask stroke"), brush) {}
  PixelBox begin(double x, double y);    // the first dab
  PixelBox extend(double x, double y);   // dabs from the last point to (x, y)
  PixelBox changed() const { return changed_; }  // union of everything this stroke touched

 private:
  MaskView mask_;
  Brush brush_;
  double last_x_ = 0, last_y_ = 0;
  double carried_ = 0;  // distance walked since the last dab
  bool started_ = false;
  PixelBox changed_;
};

struct Point {
  double x = 0, y = 0;
};

// Sets (value 255) or clears (0) every pixel whose centre lies inside the rectangle / polygon
// (even-odd rule, so a self-crossing lasso behaves like other editors). Returns the changed box.
PixelBox fill_rectangle(const MaskView& mask, const PixelBox& box, uint8_t value);
PixelBox fill_polygon(const MaskView& mask, const std::vector<Point>& polygon, uint8_t value);
PixelBox fill_rectangle(Image& mask, const PixelBox& box, uint8_t value);
PixelBox fill_polygon(Image& mask, const std::vector<Point>& polygon, uint8_t value);

void invert_mask(Image& mask);
void clear_mask(Image& mask);
void fill_mask(Image& mask);

// The mask the pipeline will paste back with: grown, then feathered (EditRequest's
// mask_grow_pixels / mask_feather_pixels), for previews.
Image effective_mask(const Image& mask, int grow_pixels, int feather_pixels);

// Smallest box holding both (an empty box is the identity).
PixelBox union_box(const PixelBox& a, const PixelBox& b);

}  // namespace flashps::edit
