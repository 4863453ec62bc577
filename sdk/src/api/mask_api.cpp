// flashps/mask.h over flashps::edit (edit/mask_painting.h) and core/mask/mask_ops.h. Painting works in
// place on the caller's pixels (edit::MaskView): a stroke sample costs the pixels under its dabs,
// never a copy of the mask.
#include "flashps/mask.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "api/abi_layout.h"
#include "api/api_support.h"
#include "core/diagnostics/error.h"
#include "core/mask/mask_ops.h"
#include "edit/mask_painting.h"
#include "pipeline/prepared_mask.h"

struct flashps_mask_stroke {
  flashps_mask_stroke(const flashps::edit::MaskView& mask, const flashps::edit::Brush& brush) : stroke(mask, brush) {}
  flashps::edit::MaskStroke stroke;
};

namespace {

using flashps::InvalidArgumentError;
using flashps::PixelBox;
using flashps::api::guarded;
using flashps::api::invalid;

// Coordinates beyond this are surely a bug (and would overflow the painter's int boxes).
constexpr double kMaxCoordinate = 16777216.0;  // 2^24 pixels
// Larger than any mask the library accepts (kMaxImageSide) many times over.
constexpr double kMaxDiameter = 4.0 * flashps::kMaxImageSide;

flashps_rect to_c_rect(const PixelBox& box) {
  if (box.empty()) return {0, 0, 0, 0};
  return {box.x, box.y, box.w, box.h};
}

void set_changed(flashps_rect* changed, const PixelBox& box) {
  if (changed) *changed = to_c_rect(box);
}

// The caller's mask as a view of its own pixels; throws InvalidArgumentError naming `function`.
flashps::edit::MaskView mask_view(const flashps_image* mask, const char* function) {
  const std::string where = std::string(function) + ": mask";
  if (!mask) throw InvalidArgumentError(where + " must not be NULL");
  if (!mask->pixels) throw InvalidArgumentError(where + " has no pixels (NULL)");
  if (mask->channels != 1)
    throw InvalidArgumentError(where + " has " + std::to_string(mask->channels) +
                               " channels; masks have 1 (use flashps_mask_from_image to convert)");
  if (mask->width == 0 || mask->height == 0 || mask->width > static_cast<uint32_t>(flashps::kMaxImageSide) ||
      mask->height > static_cast<uint32_t>(flashps::kMaxImageSide))
    throw InvalidArgumentError(where + " is " + std::to_string(mask->width) + "x" + std::to_string(mask->height) +
                               "; each side must be 1 to " + std::to_string(flashps::kMaxImageSide));
  return {static_cast<int>(mask->width), static_cast<int>(mask->height), mask->pixels};
}

void check_point(double x, double y, const char* function) {
  if (!std::isfinite(x) || !std::isfinite(y) || std::fabs(x) > kMaxCoordinate || std::fabs(y) > kMaxCoordinate)
    throw InvalidArgumentError(std::string(function) + ": point (" + std::to_string(x) + ", " + std::to_string(y) +
                               ") must be finite and within +-2^24 pixels");
}

flashps::edit::Brush to_brush(const flashps_brush& given, const char* function) {
  const std::string where = std::string(function) + ": flashps_brush.";
  if (!(given.diameter > 0 && given.diameter <= kMaxDiameter))
    throw InvalidArgumentError(where + "diameter is " + std::to_string(given.diameter) + "; it must be in (0, " +
                               std::to_string(static_cast<int>(kMaxDiameter)) + "] pixels");
  if (!(given.hardness >= 0 && given.hardness <= 1))
    throw InvalidArgumentError(where + "hardness is " + std::to_string(given.hardness) + "; it must be in [0, 1]");
  if (!(given.spacing > 0 && std::isfinite(given.spacing)))
    throw InvalidArgumentError(where + "spacing is " + std::to_string(given.spacing) +
                               "; it must be > 0 (a fraction of the diameter)");
  flashps::edit::Brush brush;
  brush.diameter = given.diameter;
  brush.hardness = given.hardness;
  brush.erase = given.erase != 0;
  brush.spacing = given.spacing;
  return brush;
}

// A rectangle clipped to the mask in 64-bit arithmetic (x + width may overflow int32).
PixelBox clip_rect(const flashps_rect& rect, const flashps::edit::MaskView& mask) {
  if (rect.width <= 0 || rect.height <= 0) return {};
  const int64_t x0 = std::max<int64_t>(0, rect.x), y0 = std::max<int64_t>(0, rect.y);
  const int64_t x1 = std::min<int64_t>(mask.width, int64_t{rect.x} + rect.width);
  const int64_t y1 = std::min<int64_t>(mask.height, int64_t{rect.y} + rect.height);
  if (x1 <= x0 || y1 <= y0) return {};
  return {static_cast<int>(x0), static_cast<int>(y0), static_cast<int>(x1 - x0), static_cast<int>(y1 - y0)};
}

}  // namespace

extern "C" {

flashps_brush flashps_brush_default(void) {
  const flashps::edit::Brush defaults;
  flashps_brush brush{};
  brush.struct_size = sizeof(brush);
  brush.diameter = defaults.diameter;
  brush.hardness = defaults.hardness;
  brush.erase = defaults.erase ? 1 : 0;
  brush.spacing = defaults.spacing;
  return brush;
}

flashps_status flashps_mask_from_image(const flashps_image* image, flashps_image* mask) {
  if (!image || !mask) return invalid("flashps_mask_from_image", "image and mask must not be NULL");
  return guarded([&] {
    flashps::api::to_c_image(flashps::mask_values(flashps::api::to_image(*image, "flashps_mask_from_image: image")),
                             mask);
  });
}

flashps_status flashps_mask_for_image(const flashps_image* image, uint32_t width, uint32_t height,
                                      flashps_image* mask) {
  static constexpr const char* kFunction = "flashps_mask_for_image";
  if (!image || !mask) return invalid(kFunction, "image and mask must not be NULL");
  if (width == 0 || height == 0 || width > uint32_t(flashps::kMaxImageSide) || height > uint32_t(flashps::kMaxImageSide))
    return invalid(kFunction, "the size is " + std::to_string(width) + "x" + std::to_string(height) +
                                  "; each side must be 1 to " + std::to_string(flashps::kMaxImageSide));
  return guarded([&] {
    const flashps::Image given = flashps::api::to_image(*image, "flashps_mask_for_image: image");
    flashps::api::to_c_image(flashps::mask_values_at(given, int(width), int(height)), mask);
  });
}

flashps_status flashps_mask_stroke_begin(flashps_image* mask, const flashps_brush* brush, double x, double y,
                                         flashps_mask_stroke** stroke, flashps_rect* changed) {
  if (!brush || !stroke) return invalid("flashps_mask_stroke_begin", "brush and stroke must not be NULL");
  *stroke = nullptr;
  flashps_brush given = flashps_brush_default();
  if (!flashps::api::read_params(brush, flashps::api::kBrushV2Size, given, "flashps_mask_stroke_begin",
                                 "flashps_brush"))
    return FLASHPS_INVALID_ARGUMENT;
  return guarded([&] {
    const flashps::edit::MaskView view = mask_view(mask, "flashps_mask_stroke_begin");
    const flashps::edit::Brush painter = to_brush(given, "flashps_mask_stroke_begin");
    check_point(x, y, "flashps_mask_stroke_begin");
    auto created = std::make_unique<flashps_mask_stroke>(view, painter);
    set_changed(changed, created->stroke.begin(x, y));
    *stroke = created.release();
  });
}

flashps_status flashps_mask_stroke_extend(flashps_mask_stroke* stroke, double x, double y, flashps_rect* changed) {
  if (!stroke) return invalid("flashps_mask_stroke_extend", "stroke must not be NULL");
  return guarded([&] {
    check_point(x, y, "flashps_mask_stroke_extend");
    set_changed(changed, stroke->stroke.extend(x, y));
  });
}

void flashps_mask_stroke_end(flashps_mask_stroke* stroke, flashps_rect* changed) {
  if (changed) *changed = stroke ? to_c_rect(stroke->stroke.changed()) : flashps_rect{0, 0, 0, 0};
  delete stroke;
}

flashps_status flashps_mask_fill_rect(flashps_image* mask, flashps_rect rect, uint8_t value, flashps_rect* changed) {
  return guarded([&] {
    const flashps::edit::MaskView view = mask_view(mask, "flashps_mask_fill_rect");
    const PixelBox inside = clip_rect(rect, view);
    set_changed(changed, inside.empty() ? PixelBox{} : flashps::edit::fill_rectangle(view, inside, value));
  });
}

flashps_status flashps_mask_fill_polygon(flashps_image* mask, const double* points, size_t point_count, uint8_t value,
                                         flashps_rect* changed) {
  return guarded([&] {
    const flashps::edit::MaskView view = mask_view(mask, "flashps_mask_fill_polygon");
    if (point_count > 0 && !points)
      throw InvalidArgumentError("flashps_mask_fill_polygon: points is NULL but point_count is " +
                                 std::to_string(point_count));
    if (point_count > (size_t{1} << 24))
      throw InvalidArgumentError("flashps_mask_fill_polygon: " + std::to_string(point_count) +
                                 " points; at most 2^24 are accepted");
    std::vector<flashps::edit::Point> polygon(point_count);
    for (size_t i = 0; i < point_count; ++i) {
      check_point(points[2 * i], points[2 * i + 1], "flashps_mask_fill_polygon");
      polygon[i] = {points[2 * i], points[2 * i + 1]};
    }
    set_changed(changed, flashps::edit::fill_polygon(view, polygon, value));
  });
}

flashps_status flashps_mask_invert(flashps_image* mask) {
  return guarded([&] {
    const flashps::edit::MaskView view = mask_view(mask, "flashps_mask_invert");
    for (uint8_t *pixel = view.pixels, *end = view.pixels + view.size(); pixel != end; ++pixel) *pixel = 255 - *pixel;
  });
}

flashps_status flashps_mask_clear(flashps_image* mask) {
  return guarded([&] {
    const flashps::edit::MaskView view = mask_view(mask, "flashps_mask_clear");
    std::fill_n(view.pixels, view.size(), uint8_t{0});
  });
}

flashps_status flashps_mask_fill(flashps_image* mask) {
  return guarded([&] {
    const flashps::edit::MaskView view = mask_view(mask, "flashps_mask_fill");
    std::fill_n(view.pixels, view.size(), uint8_t{255});
  });
}

flashps_status flashps_mask_effective(const flashps_image* mask, int grow_pixels, int feather_pixels,
                                      flashps_image* result) {
  if (!result) return invalid("flashps_mask_effective", "result must not be NULL");
  return guarded([&] {
    mask_view(mask, "flashps_mask_effective");  // validates: a 1-channel mask
    if (grow_pixels < 0 || feather_pixels < 0)
      throw InvalidArgumentError("flashps_mask_effective: grow_pixels (" + std::to_string(grow_pixels) +
                                 ") and feather_pixels (" + std::to_string(feather_pixels) + ") must be >= 0");
    const flashps::Image copy = flashps::api::to_image(*mask, "flashps_mask_effective: mask");
    flashps::api::to_c_image(flashps::edit::effective_mask(copy, grow_pixels, feather_pixels), result);
  });
}

flashps_status flashps_mask_bounds(const flashps_image* mask, flashps_rect* bounds) {
  if (!bounds) return invalid("flashps_mask_bounds", "bounds must not be NULL");
  return guarded([&] {
    const flashps::edit::MaskView view = mask_view(mask, "flashps_mask_bounds");
    int x0 = view.width, y0 = view.height, x1 = -1, y1 = -1;
    for (int y = 0; y < view.height; ++y) {
      const uint8_t* row = &view.at(0, y);
      for (int x = 0; x < view.width; ++x) {
        if (!row[x]) continue;
        x0 = std::min(x0, x);
        x1 = std::max(x1, x);
        y0 = std::min(y0, y);
        y1 = y;
      }
    }
    *bounds = x1 < 0 ? flashps_rect{0, 0, 0, 0} : flashps_rect{x0, y0, x1 - x0 + 1, y1 - y0 + 1};
  });
}

}  // extern "C"
