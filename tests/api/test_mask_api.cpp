// The C API's mask painting (flashps/mask.h): the same pixels as flashps::edit, on the caller's
// buffer, and every refusal.
#include <catch2/catch.hpp>
#include <climits>
#include <cmath>
#include <string>
#include <vector>

#include "core/mask/mask_ops.h"
#include "edit/mask_painting.h"
#include "flashps/flashps.h"

using flashps::Image;
using flashps::PixelBox;

namespace {

// A C mask over an Image's pixels: what the C API paints is what the Image holds.
flashps_image c_view(Image& image) {
  return {static_cast<uint32_t>(image.width), static_cast<uint32_t>(image.height),
          static_cast<uint32_t>(image.channels), image.pixels.data()};
}

bool same_box(const flashps_rect& rect, const PixelBox& box) {
  if (box.empty()) return rect.width == 0 && rect.height == 0;
  return rect.x == box.x && rect.y == box.y && rect.width == box.w && rect.height == box.h;
}

std::string last_error() { return flashps_last_error(); }

}  // namespace

TEST_CASE("mask API: strokes paint what edit::MaskStroke paints, on the caller's pixels", "[api][mask_api]") {
  const std::vector<std::pair<double, double>> path{{10.2, 12.7}, {14, 13}, {30.5, 40.25}, {31, 41}, {70.75, 20.5},
                                                    {5, 60}};
  for (const bool erase : {false, true}) {
    for (const double hardness : {0.0, 0.5, 1.0}) {
      Image expected(80, 64, 1, erase ? 255 : 0), painted = expected;
      flashps::edit::Brush brush;
      brush.diameter = 9.5;
      brush.hardness = hardness;
      brush.erase = erase;
      brush.spacing = 0.2;
      flashps_brush c_brush = flashps_brush_default();
      c_brush.diameter = brush.diameter;
      c_brush.hardness = brush.hardness;
      c_brush.erase = erase ? 1 : 0;
      c_brush.spacing = brush.spacing;

      flashps::edit::MaskStroke reference(expected, brush);
      flashps_image mask = c_view(painted);
      flashps_mask_stroke* stroke = nullptr;
      flashps_rect changed{};
      REQUIRE(flashps_mask_stroke_begin(&mask, &c_brush, path[0].first, path[0].second, &stroke, &changed) ==
              FLASHPS_OK);
      CHECK(same_box(changed, reference.begin(path[0].first, path[0].second)));
      for (size_t i = 1; i < path.size(); ++i) {
        REQUIRE(flashps_mask_stroke_extend(stroke, path[i].first, path[i].second, &changed) == FLASHPS_OK);
        CHECK(same_box(changed, reference.extend(path[i].first, path[i].second)));
      }
      REQUIRE(flashps_mask_stroke_extend(stroke, 6, 61, nullptr) == FLASHPS_OK);  // `changed` may be NULL
      reference.extend(6, 61);
      flashps_rect everything{};
      flashps_mask_stroke_end(stroke, &everything);
      CHECK(same_box(everything, reference.changed()));
      CHECK(painted.pixels == expected.pixels);
      CHECK(painted.pixels != Image(80, 64, 1, erase ? 255 : 0).pixels);  // it did paint
    }
  }
  flashps_rect changed{1, 2, 3, 4};
  flashps_mask_stroke_end(nullptr, &changed);
  CHECK(changed.width == 0);
  flashps_mask_stroke_end(nullptr, nullptr);
}

TEST_CASE("mask API: brush and stroke refusals", "[api][mask_api]") {
  Image grey(16, 16, 1), rgb(16, 16, 3);
  flashps_image mask = c_view(grey), colour = c_view(rgb);
  flashps_brush brush = flashps_brush_default();
  const flashps::edit::Brush defaults;
  CHECK(brush.struct_size == sizeof(brush));
  CHECK(brush.diameter == defaults.diameter);
  CHECK(brush.hardness == defaults.hardness);
  CHECK(brush.spacing == defaults.spacing);
  CHECK(brush.erase == 0);
  flashps_mask_stroke* stroke = nullptr;

  CHECK(flashps_mask_stroke_begin(&colour, &brush, 4, 4, &stroke, nullptr) == FLASHPS_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("3 channels"));
  CHECK(flashps_mask_stroke_begin(nullptr, &brush, 4, 4, &stroke, nullptr) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_mask_stroke_begin(&mask, nullptr, 4, 4, &stroke, nullptr) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_mask_stroke_begin(&mask, &brush, 4, 4, nullptr, nullptr) == FLASHPS_INVALID_ARGUMENT);
  flashps_image no_pixels = mask;
  no_pixels.pixels = nullptr;
  CHECK(flashps_mask_stroke_begin(&no_pixels, &brush, 4, 4, &stroke, nullptr) == FLASHPS_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("no pixels"));
  CHECK(flashps_mask_stroke_begin(&mask, &brush, NAN, 4, &stroke, nullptr) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_mask_stroke_begin(&mask, &brush, 4, 1e12, &stroke, nullptr) == FLASHPS_INVALID_ARGUMENT);

  struct Case {
    const char* field;
    double diameter, hardness, spacing;
  };
  for (const Case& bad : {Case{"diameter", 0, 0.5, 0.1}, Case{"diameter", -3, 0.5, 0.1}, Case{"diameter", NAN, 0.5, 0.1},
                          Case{"hardness", 4, -0.1, 0.1}, Case{"hardness", 4, 1.5, 0.1}, Case{"spacing", 4, 0.5, 0},
                          Case{"spacing", 4, 0.5, INFINITY}}) {
    flashps_brush wrong = flashps_brush_default();
    wrong.diameter = bad.diameter;
    wrong.hardness = bad.hardness;
    wrong.spacing = bad.spacing;
    CHECK(flashps_mask_stroke_begin(&mask, &wrong, 4, 4, &stroke, nullptr) == FLASHPS_INVALID_ARGUMENT);
    CHECK_THAT(last_error(), Catch::Contains(bad.field));
    CHECK(stroke == nullptr);
  }
  flashps_brush sized = flashps_brush_default();
  sized.struct_size = 0;
  CHECK(flashps_mask_stroke_begin(&mask, &sized, 4, 4, &stroke, nullptr) == FLASHPS_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("flashps_brush"));
  sized.struct_size = sizeof(sized) - 8;
  CHECK(flashps_mask_stroke_begin(&mask, &sized, 4, 4, &stroke, nullptr) == FLASHPS_INVALID_ARGUMENT);
  struct Larger {
    flashps_brush brush;
    uint64_t tail;
  } larger{flashps_brush_default(), 5};
  larger.brush.struct_size = sizeof(larger);
  CHECK(flashps_mask_stroke_begin(&mask, &larger.brush, 4, 4, &stroke, nullptr) == FLASHPS_INVALID_ARGUMENT);
  larger.tail = 0;
  REQUIRE(flashps_mask_stroke_begin(&mask, &larger.brush, 4, 4, &stroke, nullptr) == FLASHPS_OK);
  CHECK(flashps_mask_stroke_extend(nullptr, 1, 1, nullptr) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_mask_stroke_extend(stroke, INFINITY, 1, nullptr) == FLASHPS_INVALID_ARGUMENT);
  flashps_mask_stroke_end(stroke, nullptr);
  CHECK(grey.at(4, 4) == 255);
}

TEST_CASE("mask API: rectangle and polygon fills match edit's, clipped without overflow", "[api][mask_api]") {
  Image expected(40, 30, 1), filled(40, 30, 1);
  flashps_image mask = c_view(filled);
  flashps_rect changed{};

  REQUIRE(flashps_mask_fill_rect(&mask, {-5, 2, 12, 7}, 255, &changed) == FLASHPS_OK);
  CHECK(same_box(changed, flashps::edit::fill_rectangle(expected, {-5, 2, 12, 7}, 255)));
  CHECK(changed.x == 0);
  CHECK(changed.width == 7);
  REQUIRE(flashps_mask_fill_rect(&mask, {3, 4, 2, 2}, 0, &changed) == FLASHPS_OK);
  flashps::edit::fill_rectangle(expected, {3, 4, 2, 2}, 0);
  REQUIRE(flashps_mask_fill_rect(&mask, {20, 10, INT_MAX, INT_MAX}, 255, &changed) == FLASHPS_OK);
  CHECK(changed.x == 20);
  CHECK(changed.width == 20);
  CHECK(changed.height == 20);
  flashps::edit::fill_rectangle(expected, {20, 10, 20, 20}, 255);
  REQUIRE(flashps_mask_fill_rect(&mask, {100, 100, 5, 5}, 255, &changed) == FLASHPS_OK);
  CHECK(changed.width == 0);
  REQUIRE(flashps_mask_fill_rect(&mask, {INT_MIN, INT_MIN, 5, 5}, 255, nullptr) == FLASHPS_OK);
  CHECK(filled.pixels == expected.pixels);

  const std::vector<double> lasso{2.5, 20, 18, 21.5, 9, 29.75, 30, 5};  // a self-crossing quadrilateral
  REQUIRE(flashps_mask_fill_polygon(&mask, lasso.data(), 4, 255, &changed) == FLASHPS_OK);
  CHECK(same_box(changed, flashps::edit::fill_polygon(expected, {{2.5, 20}, {18, 21.5}, {9, 29.75}, {30, 5}}, 255)));
  REQUIRE(flashps_mask_fill_polygon(&mask, lasso.data(), 3, 0, &changed) == FLASHPS_OK);
  flashps::edit::fill_polygon(expected, {{2.5, 20}, {18, 21.5}, {9, 29.75}}, 0);
  CHECK(filled.pixels == expected.pixels);
  REQUIRE(flashps_mask_fill_polygon(&mask, lasso.data(), 2, 255, &changed) == FLASHPS_OK);  // not a polygon
  CHECK(changed.width == 0);
  CHECK(flashps_mask_fill_polygon(&mask, nullptr, 0, 255, nullptr) == FLASHPS_OK);
  CHECK(flashps_mask_fill_polygon(&mask, nullptr, 3, 255, nullptr) == FLASHPS_INVALID_ARGUMENT);
  const std::vector<double> bad{1, 1, NAN, 2, 3, 3};
  CHECK(flashps_mask_fill_polygon(&mask, bad.data(), 3, 255, nullptr) == FLASHPS_INVALID_ARGUMENT);
  CHECK(filled.pixels == expected.pixels);  // refused calls change nothing

  Image rgb(4, 4, 3);
  flashps_image colour = c_view(rgb);
  CHECK(flashps_mask_fill_rect(&colour, {0, 0, 2, 2}, 255, nullptr) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_mask_fill_polygon(&colour, lasso.data(), 4, 255, nullptr) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_mask_fill_rect(nullptr, {0, 0, 2, 2}, 255, nullptr) == FLASHPS_INVALID_ARGUMENT);
}

TEST_CASE("mask API: invert, clear, fill, bounds and the effective mask", "[api][mask_api]") {
  Image image(20, 10, 1);
  image.at(3, 2) = 1;  // any nonzero value counts for bounds
  image.at(15, 7) = 200;
  flashps_image mask = c_view(image);
  flashps_rect bounds{};
  REQUIRE(flashps_mask_bounds(&mask, &bounds) == FLASHPS_OK);
  CHECK((bounds.x == 3 && bounds.y == 2 && bounds.width == 13 && bounds.height == 6));

  Image inverted = image;
  flashps::edit::invert_mask(inverted);
  REQUIRE(flashps_mask_invert(&mask) == FLASHPS_OK);
  CHECK(image.pixels == inverted.pixels);
  REQUIRE(flashps_mask_bounds(&mask, &bounds) == FLASHPS_OK);
  CHECK((bounds.x == 0 && bounds.y == 0 && bounds.width == 20 && bounds.height == 10));
  REQUIRE(flashps_mask_clear(&mask) == FLASHPS_OK);
  CHECK(image.pixels == Image(20, 10, 1, 0).pixels);
  REQUIRE(flashps_mask_bounds(&mask, &bounds) == FLASHPS_OK);
  CHECK((bounds.width == 0 && bounds.height == 0));
  REQUIRE(flashps_mask_fill(&mask) == FLASHPS_OK);
  CHECK(image.pixels == Image(20, 10, 1, 255).pixels);

  Image painted(48, 40, 1);
  flashps::edit::fill_rectangle(painted, {10, 12, 9, 7}, 255);
  flashps_image source = c_view(painted);
  flashps_image effective{};
  REQUIRE(flashps_mask_effective(&source, 3, 4, &effective) == FLASHPS_OK);
  const Image expected = flashps::edit::effective_mask(painted, 3, 4);
  REQUIRE(effective.channels == 1);
  REQUIRE(effective.width == 48);
  CHECK(std::vector<uint8_t>(effective.pixels, effective.pixels + 48 * 40) == expected.pixels);
  flashps_image_free(&effective);
  CHECK(flashps_mask_effective(&source, -1, 0, &effective) == FLASHPS_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("grow_pixels"));
  CHECK(flashps_mask_effective(&source, 0, -2, &effective) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_mask_effective(&source, 1, 1, nullptr) == FLASHPS_INVALID_ARGUMENT);
  CHECK(effective.pixels == nullptr);

  Image rgb(4, 4, 3);
  flashps_image colour = c_view(rgb);
  CHECK(flashps_mask_invert(&colour) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_mask_clear(&colour) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_mask_fill(&colour) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_mask_bounds(&colour, &bounds) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_mask_effective(&colour, 0, 0, &effective) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_mask_invert(nullptr) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_mask_bounds(&mask, nullptr) == FLASHPS_INVALID_ARGUMENT);
}

TEST_CASE("mask API: mask_from_image is mask_values (the one mask rule)", "[api][mask_api]") {
  Image rgba(6, 5, 4);
  for (size_t i = 0; i < rgba.pixels.size(); ++i) rgba.pixels[i] = static_cast<uint8_t>((i * 37) % 256);
  Image rgb(6, 5, 3);
  for (size_t i = 0; i < rgb.pixels.size(); ++i) rgb.pixels[i] = static_cast<uint8_t>((i * 91) % 256);
  Image grey(6, 5, 1);
  for (size_t i = 0; i < grey.pixels.size(); ++i) grey.pixels[i] = static_cast<uint8_t>(i * 7);
  for (Image* image : {&rgba, &rgb, &grey}) {
    flashps_image source = c_view(*image), mask{};
    REQUIRE(flashps_mask_from_image(&source, &mask) == FLASHPS_OK);
    REQUIRE(mask.channels == 1);
    const Image expected = flashps::mask_values(*image);
    CHECK(std::vector<uint8_t>(mask.pixels, mask.pixels + 30) == expected.pixels);
    flashps_image_free(&mask);
  }
  // Opaque white is fully masked, transparent white not at all.
  Image corners(2, 1, 4, 255);
  corners.at(1, 0, 3) = 0;
  flashps_image source = c_view(corners), mask{};
  REQUIRE(flashps_mask_from_image(&source, &mask) == FLASHPS_OK);
  CHECK(mask.pixels[0] == 255);
  CHECK(mask.pixels[1] == 0);
  flashps_image_free(&mask);
  CHECK(flashps_mask_from_image(nullptr, &mask) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_mask_from_image(&source, nullptr) == FLASHPS_INVALID_ARGUMENT);
  source.channels = 2;
  CHECK(flashps_mask_from_image(&source, &mask) == FLASHPS_INVALID_ARGUMENT);
}
