// Mask painting (brush, strokes, rectangle, lasso, invert/clear/fill) with exact expected pixels.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "core/diagnostics/error.h"
#include "edit/mask_painting.h"

using flashps::Image;
using flashps::PixelBox;
using namespace flashps::edit;

namespace {

int count_at_least(const Image& mask, int level) {
  int count = 0;
  for (uint8_t value : mask.pixels) count += value >= level;
  return count;
}

}  // namespace

TEST_CASE("a hard dab sets a disc of the brush's diameter", "[mask_painting]") {
  Image mask(64, 64, 1);
  Brush brush;
  brush.diameter = 20;
  brush.hardness = 1.0;
  stamp_dab(mask, 32, 32, brush);
  // Pixels well inside the radius are full, well outside untouched.
  CHECK(mask.at(32, 32) == 255);
  CHECK(mask.at(32 + 8, 32) == 255);
  CHECK(mask.at(32 + 11, 32) == 0);
  CHECK(mask.at(32 + 8, 32 + 8) == 0);  // outside the disc, inside its square
  // Area within a few percent of pi r^2 (the anti-aliased ring counts half).
  const int full = count_at_least(mask, 128);
  CHECK(std::abs(full - M_PI * 100) < 0.05 * M_PI * 100);
}

TEST_CASE("hardness sets where the falloff starts", "[mask_painting]") {
  Brush hard, soft;
  hard.diameter = soft.diameter = 40;
  hard.hardness = 1.0;
  soft.hardness = 0.0;
  Image hard_mask(64, 64, 1), soft_mask(64, 64, 1);
  stamp_dab(hard_mask, 31.5, 31.5, hard);
  stamp_dab(soft_mask, 31.5, 31.5, soft);
  // Halfway out (pixel 41's centre is 10 px away): the hard brush is full, the soft one half
  // strength (smoothstep at t = 0.5).
  CHECK(hard_mask.at(41, 31) == 255);
  CHECK(std::abs(soft_mask.at(41, 31) - 128) <= 1);
  // Coverage falls monotonically from the centre of a soft brush.
  for (int x = 32; x < 52; ++x) CHECK(soft_mask.at(x, 31) <= soft_mask.at(x - 1, 31));
  CHECK(brush_coverage(soft, 0) == Approx(1.0));
  CHECK(brush_coverage(soft, 21) == 0.0);
}

TEST_CASE("the eraser lowers values and overlapping dabs do not build up", "[mask_painting]") {
  Image mask(32, 32, 1);
  Brush soft;
  soft.diameter = 16;
  soft.hardness = 0.0;
  stamp_dab(mask, 16, 16, soft);
  const Image once = mask;
  stamp_dab(mask, 16, 16, soft);
  CHECK(mask.pixels == once.pixels);

  flashps::edit::fill_mask(mask);
  Brush eraser;
  eraser.diameter = 10;
  eraser.hardness = 1.0;
  eraser.erase = true;
  const PixelBox box = stamp_dab(mask, 16, 16, eraser);
  CHECK(mask.at(16, 16) == 0);
  CHECK(mask.at(2, 2) == 255);
  CHECK(box.x <= 11);
  CHECK(box.x + box.w >= 21);
}

TEST_CASE("a stroke covers the path between samples without gaps", "[mask_painting]") {
  Image mask(100, 40, 1);
  Brush brush;
  brush.diameter = 6;
  brush.hardness = 1.0;
  MaskStroke stroke(mask, brush);
  stroke.begin(10, 20);
  stroke.extend(90, 20);  // one long jump: interpolated dabs must fill it
  for (int x = 10; x < 90; ++x) CHECK(mask.at(x, 20) == 255);
  CHECK(mask.at(50, 20 + 5) == 0);  // only the brush's width
  const PixelBox changed = stroke.changed();
  CHECK(changed.x <= 6);
  CHECK(changed.x + changed.w >= 94);

  // Many tiny moves paint the same line as one big one.
  Image slow(100, 40, 1);
  MaskStroke slow_stroke(slow, brush);
  slow_stroke.begin(10, 20);
  for (double x = 10.5; x <= 90; x += 0.5) slow_stroke.extend(x, 20);
  for (int x = 10; x < 90; ++x) CHECK(slow.at(x, 20) == 255);
}

TEST_CASE("rectangle and lasso fill pixels whose centres are inside", "[mask_painting]") {
  Image mask(20, 20, 1);
  const PixelBox changed = fill_rectangle(mask, {-5, 2, 10, 3}, 255);
  CHECK(changed.x == 0);
  CHECK(changed.w == 5);
  CHECK(count_at_least(mask, 255) == 15);
  fill_rectangle(mask, {0, 0, 20, 20}, 0);
  CHECK(count_at_least(mask, 1) == 0);

  // A right triangle with legs of 10: 45 or 55 pixel centres inside depending on the diagonal.
  fill_polygon(mask, {{0, 0}, {10, 0}, {0, 10}}, 255);
  CHECK(count_at_least(mask, 255) == 45);
  CHECK(mask.at(0, 0) == 255);
  CHECK(mask.at(9, 9) == 0);

  // A lasso square, then a subtracting lasso inside it.
  clear_mask(mask);
  fill_polygon(mask, {{2, 2}, {18, 2}, {18, 18}, {2, 18}}, 255);
  CHECK(count_at_least(mask, 255) == 256);
  fill_polygon(mask, {{6, 6}, {14, 6}, {14, 14}, {6, 14}}, 0);
  CHECK(count_at_least(mask, 255) == 256 - 64);
  CHECK(fill_polygon(mask, {{1, 1}, {5, 5}}, 255).empty());  // not a polygon
}

TEST_CASE("invert, clear and fill", "[mask_painting]") {
  Image mask(4, 2, 1);
  mask.pixels = {0, 10, 128, 255, 1, 2, 3, 4};
  invert_mask(mask);
  CHECK(mask.pixels == std::vector<uint8_t>{255, 245, 127, 0, 254, 253, 252, 251});
  fill_mask(mask);
  CHECK(count_at_least(mask, 255) == 8);
  clear_mask(mask);
  CHECK(count_at_least(mask, 1) == 0);
  Image rgb(4, 2, 3);
  CHECK_THROWS_AS(invert_mask(rgb), flashps::Error);
}

TEST_CASE("the effective mask is the pipeline's binarized, grown, feathered mask", "[mask_painting]") {
  Image mask(32, 32, 1);
  fill_rectangle(mask, {12, 12, 8, 8}, 200);
  mask.at(2, 2) = 100;  // under the binarization threshold
  const Image plain = effective_mask(mask, 0, 0);
  CHECK(count_at_least(plain, 255) == 64);
  CHECK(plain.at(2, 2) == 0);
  const Image grown = effective_mask(mask, 2, 0);
  CHECK(grown.at(10, 15) == 255);
  CHECK(grown.at(9, 15) == 0);
  const Image feathered = effective_mask(mask, 0, 4);
  CHECK(feathered.at(12, 15) > 0);
  CHECK(feathered.at(12, 15) < 255);
}
