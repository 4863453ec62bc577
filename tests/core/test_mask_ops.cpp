// Mask and image operations on small hand-made images with exact expected values.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/diagnostics/error.h"
#include "core/mask/mask_ops.h"

using flashps::Image;
using Bytes = std::vector<uint8_t>;
using Catch::Contains;  // the string matcher (v2 and, through support/catch2_v3, v3)

namespace {

// A 1-channel mask from rows of '#' (255) and '.' (0).
Image mask_from(const std::vector<std::string>& rows) {
  Image mask(static_cast<int>(rows[0].size()), static_cast<int>(rows.size()), 1);
  for (int y = 0; y < mask.height; ++y) {
    for (int x = 0; x < mask.width; ++x) mask.at(x, y) = rows[y][x] == '#' ? 255 : 0;
  }
  return mask;
}

std::vector<std::string> rows_of(const Image& mask) {
  std::vector<std::string> rows(mask.height, std::string(mask.width, '?'));
  for (int y = 0; y < mask.height; ++y) {
    for (int x = 0; x < mask.width; ++x) {
      const uint8_t value = mask.at(x, y);
      rows[y][x] = value == 255 ? '#' : value == 0 ? '.' : '?';
    }
  }
  return rows;
}

Image image_from(int width, int height, int channels, const Bytes& pixels) {
  Image image(width, height, channels);
  image.pixels = pixels;
  return image;
}

// Reference dilation: every pixel within Euclidean distance `radius` of a set pixel.
Image brute_force_dilation(const Image& mask, int radius) {
  Image result(mask.width, mask.height, 1);
  for (int y = 0; y < mask.height; ++y) {
    for (int x = 0; x < mask.width; ++x) {
      for (int sy = 0; sy < mask.height && !result.at(x, y); ++sy) {
        for (int sx = 0; sx < mask.width; ++sx) {
          if (mask.at(sx, sy) && (sx - x) * (sx - x) + (sy - y) * (sy - y) <= radius * radius) {
            result.at(x, y) = 255;
            break;
          }
        }
      }
    }
  }
  return result;
}

}  // namespace

TEST_CASE("binarize_mask reads gray, RGB and RGBA masks", "[mask]") {
  const Image gray = image_from(4, 1, 1, {0, 127, 128, 255});
  CHECK(flashps::binarize_mask(gray).pixels == Bytes{0, 0, 255, 255});
  CHECK(flashps::binarize_mask(gray, 200).pixels == Bytes{0, 0, 0, 255});
  const Image rgb = image_from(2, 1, 3, {255, 255, 255, 10, 10, 10});
  CHECK(flashps::binarize_mask(rgb).pixels == Bytes{255, 0});
  // White strokes on a transparent layer: only the opaque ones count.
  const Image rgba = image_from(3, 1, 4, {255, 255, 255, 255, 255, 255, 255, 0, 255, 255, 255, 100});
  CHECK(flashps::binarize_mask(rgba).pixels == Bytes{255, 0, 0});
  Image two_channels(1, 1, 1);
  two_channels.channels = 2;
  CHECK_THROWS_WITH(flashps::binarize_mask(two_channels), Contains("mask: unsupported channel count 2"));
}

TEST_CASE("mask_values: one rule for colour, alpha-only and transparent-layer masks", "[mask]") {
  // Colour masks count by their brightest channel: pure red, green or blue strokes are fully set.
  const Image colours = image_from(5, 1, 3, {255, 0, 0, 0, 255, 0, 0, 0, 255, 100, 20, 30, 0, 0, 0});
  CHECK(flashps::mask_values(colours).pixels == Bytes{255, 255, 255, 100, 0});
  // Strokes in alpha alone (black on a transparent layer): alpha is the coverage.
  const Image alpha_only = image_from(3, 1, 4, {0, 0, 0, 255, 0, 0, 0, 0, 0, 0, 0, 128});
  CHECK(flashps::mask_values(alpha_only).pixels == Bytes{255, 0, 128});
  // Hidden colour under fully transparent pixels does not count as visible colour.
  const Image hidden_white = image_from(2, 1, 4, {0, 0, 0, 255, 255, 255, 255, 0});
  CHECK(flashps::mask_values(hidden_white).pixels == Bytes{255, 0});
  // Red strokes on a transparent layer: colour times alpha.
  const Image red_layer = image_from(3, 1, 4, {255, 0, 0, 255, 0, 0, 0, 0, 255, 0, 0, 51});
  CHECK(flashps::mask_values(red_layer).pixels == Bytes{255, 0, 51});
  // An opaque all-black RGBA mask is empty, and opaque white on black reads as RGB would.
  CHECK(flashps::mask_values(image_from(2, 1, 4, {0, 0, 0, 255, 0, 0, 0, 255})).pixels == Bytes{0, 0});
  CHECK(flashps::mask_values(image_from(2, 1, 4, {0, 0, 0, 255, 255, 255, 255, 255})).pixels == Bytes{0, 255});
  // Every reader agrees: ratio, bounds and binarization of an alpha-only mask.
  const Image stroke = image_from(4, 1, 4, {0, 0, 0, 0, 0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 0});
  CHECK(flashps::binarize_mask(stroke).pixels == Bytes{0, 255, 255, 0});
  CHECK(flashps::mask_ratio(stroke) == Approx(0.5));
  const flashps::PixelBox box = flashps::mask_bounding_box(stroke);
  CHECK((box.x == 1 && box.w == 2 && box.h == 1));
}

TEST_CASE("restore_alpha keeps the input's transparency, opaque where regenerated", "[mask]") {
  const Image input = image_from(3, 1, 4, {1, 2, 3, 0, 4, 5, 6, 100, 7, 8, 9, 255});
  const Image result = image_from(3, 1, 3, {10, 11, 12, 13, 14, 15, 16, 17, 18});
  CHECK(flashps::restore_alpha(result, input, Image()).pixels ==
        Bytes{10, 11, 12, 0, 13, 14, 15, 100, 16, 17, 18, 255});
  const Image paste = image_from(3, 1, 1, {255, 0, 128});
  CHECK(flashps::restore_alpha(result, input, paste).pixels ==
        Bytes{10, 11, 12, 255, 13, 14, 15, 100, 16, 17, 18, 255});
  CHECK(flashps::restore_alpha(result, image_from(3, 1, 3, Bytes(9, 0)), paste).channels == 3);
  CHECK_THROWS_WITH(flashps::restore_alpha(image_from(1, 1, 3, {0, 0, 0}), input, Image()),
                    Contains("restore_alpha: result 1x1"));
}

TEST_CASE("grow_mask dilates with an exact disc", "[mask]") {
  const Image dot = mask_from({".......", ".......", ".......", "...#...", ".......", ".......", "......."});
  CHECK(rows_of(flashps::grow_mask(dot, 2)) == std::vector<std::string>{
                                                   ".......",
                                                   "...#...",
                                                   "..###..",
                                                   ".#####.",
                                                   "..###..",
                                                   "...#...",
                                                   ".......",
                                               });
  CHECK(rows_of(flashps::grow_mask(dot, 3))[1] == ".#####.");  // (2,2) offset: 8 <= 9
  CHECK(flashps::grow_mask(dot, 0).pixels == dot.pixels);
  CHECK(flashps::grow_mask(Image(5, 4, 1, 0), 3).pixels == Bytes(20, 0));

  std::mt19937 random(42);
  Image sparse(23, 17, 1);
  for (uint8_t& value : sparse.pixels) value = random() % 40 == 0 ? 255 : 0;
  for (int radius : {1, 2, 4, 7, 30, 1000000}) {
    INFO("radius " << radius);
    CHECK(flashps::grow_mask(sparse, radius).pixels == brute_force_dilation(sparse, std::min(radius, 100)).pixels);
  }
}

TEST_CASE("grow_mask with negative pixels erodes, keeping the image border", "[mask]") {
  const Image square = mask_from({".......", ".#####.", ".#####.", ".#####.", ".#####.", ".#####.", "......."});
  CHECK(rows_of(flashps::grow_mask(square, -2)) == std::vector<std::string>{
                                                       ".......",
                                                       ".......",
                                                       ".......",
                                                       "...#...",
                                                       ".......",
                                                       ".......",
                                                       ".......",
                                                   });
  CHECK(rows_of(flashps::grow_mask(square, -1))[2] == "..###..");
  const Image at_border = mask_from({"###..", "###..", "###.."});
  CHECK(rows_of(flashps::grow_mask(at_border, -1)) == std::vector<std::string>{"##...", "##...", "##..."});
  CHECK(flashps::grow_mask(Image(4, 4, 1, 255), -3).pixels == Bytes(16, 255));

  // Erosion is the complement of dilating the complement (outside pixels never erode).
  std::mt19937 random(3);
  Image dense(19, 15, 1);
  for (uint8_t& value : dense.pixels) value = random() % 25 == 0 ? 0 : 255;
  for (int radius : {1, 3, 6}) {
    Image holes = dense;
    for (uint8_t& value : holes.pixels) value = static_cast<uint8_t>(255 - value);
    Image expected = brute_force_dilation(holes, radius);
    for (uint8_t& value : expected.pixels) value = static_cast<uint8_t>(255 - value);
    INFO("radius " << radius);
    CHECK(flashps::grow_mask(dense, -radius).pixels == expected.pixels);
  }
}

TEST_CASE("feather_mask ramps across the edge", "[mask]") {
  Image step(10, 3, 1);
  for (int y = 0; y < 3; ++y) {
    for (int x = 3; x < 10; ++x) step.at(x, y) = 255;
  }
  // One box of radius 1: thirds of 255.
  const Image one = flashps::feather_mask(step, 1);
  CHECK(Bytes(one.pixels.begin(), one.pixels.begin() + 10) == Bytes{0, 0, 85, 170, 255, 255, 255, 255, 255, 255});
  // Three boxes of radius 1: kernel (1 3 6 7 6 3 1) / 27, so the ramp reaches 3 pixels each side.
  const Image three = flashps::feather_mask(step, 3);
  const Bytes expected_row = {9, 38, 94, 161, 217, 246, 255, 255, 255, 255};
  for (int y = 0; y < 3; ++y) CHECK(Bytes(three.pixels.begin() + y * 10, three.pixels.begin() + y * 10 + 10) == expected_row);

  // Radii larger than the image: edge pixels are replicated. Reference: clamped box blurs 3, 2, 2.
  const Image tiny = image_from(3, 1, 1, {0, 0, 255});
  std::vector<double> line = {0, 0, 255};
  for (int radius : {3, 2, 2}) {
    std::vector<double> blurred(3, 0.0);
    for (int x = 0; x < 3; ++x) {
      for (int k = -radius; k <= radius; ++k) blurred[x] += line[std::clamp(x + k, 0, 2)] / (2 * radius + 1);
    }
    line = blurred;
  }
  const Image tiny_soft = flashps::feather_mask(tiny, 7);
  for (int x = 0; x < 3; ++x) CHECK(tiny_soft.at(x, 0) == std::lround(line[x]));

  CHECK(flashps::feather_mask(step, 0).pixels == step.pixels);
  CHECK(flashps::feather_mask(Image(6, 6, 1, 255), 4).pixels == Bytes(36, 255));
  CHECK_THROWS_WITH(flashps::feather_mask(step, -1), Contains("feather_mask"));

  // A 7x7 square blurred in 2-D: its centre is out of reach of the ramp, the result is symmetric.
  Image square(21, 21, 1);
  for (int y = 7; y < 14; ++y) {
    for (int x = 7; x < 14; ++x) square.at(x, y) = 255;
  }
  const Image soft = flashps::feather_mask(square, 3);
  CHECK(soft.at(10, 10) == 255);
  CHECK(soft.at(0, 0) == 0);
  CHECK(soft.at(3, 10) == 0);  // 4 pixels from the edge: outside the ramp
  CHECK(soft.at(4, 10) > 0);   // 3 pixels from the edge: inside it
  CHECK(soft.at(10, 4) == soft.at(4, 10));
  CHECK(soft.at(16, 10) == soft.at(4, 10));
  CHECK(soft.at(7, 7) < soft.at(7, 10));  // corners are softer than edges
}

TEST_CASE("resize_nearest picks the source pixel under each centre", "[mask]") {
  const Image small = image_from(2, 2, 1, {1, 2, 3, 4});
  CHECK(flashps::resize_nearest(small, 4, 4).pixels == Bytes{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
  const Image row = image_from(4, 1, 3, {0, 0, 0, 10, 10, 10, 20, 20, 20, 30, 30, 30});
  CHECK(flashps::resize_nearest(row, 2, 1).pixels == Bytes{10, 10, 10, 30, 30, 30});
  CHECK_THROWS_WITH(flashps::resize_nearest(small, 0, 3), Contains("resize_nearest: invalid target size 0x3"));
}

TEST_CASE("resize_bilinear interpolates, and area-averages when shrinking more than 2x", "[mask]") {
  CHECK(flashps::resize_bilinear(image_from(2, 1, 1, {0, 255}), 4, 1).pixels == Bytes{0, 64, 191, 255});
  CHECK(flashps::resize_bilinear(image_from(4, 1, 1, {0, 100, 200, 255}), 2, 1).pixels == Bytes{50, 228});
  const Image column = image_from(1, 8, 1, {10, 20, 30, 40, 50, 60, 70, 80});
  CHECK(flashps::resize_bilinear(column, 1, 2).pixels == Bytes{25, 65});  // 4x: mean of each 4
  // A one-pixel line survives a 6x shrink as a faint average instead of vanishing or dominating.
  Image line(12, 1, 1);
  line.at(7, 0) = 240;
  CHECK(flashps::resize_bilinear(line, 2, 1).pixels == Bytes{0, 40});

  const Image original = image_from(3, 2, 3, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18});
  CHECK(flashps::resize_bilinear(original, 3, 2).pixels == original.pixels);
  const Image flat(7, 5, 4, 77);
  for (auto [w, h] : {std::pair{1, 1}, {3, 2}, {13, 11}, {40, 3}}) {
    CHECK(flashps::resize_bilinear(flat, w, h).pixels == Bytes(static_cast<size_t>(w) * h * 4, 77));
  }
  CHECK_THROWS_WITH(flashps::resize_bilinear(flat, 5, 20000), Contains("resize_bilinear: invalid target size"));
}

TEST_CASE("crop and paste", "[mask]") {
  Image image(4, 3, 1);
  for (size_t i = 0; i < image.pixels.size(); ++i) image.pixels[i] = static_cast<uint8_t>(i);
  CHECK(flashps::crop(image, 1, 1, 2, 2).pixels == Bytes{5, 6, 9, 10});
  CHECK(flashps::crop(image, 0, 0, 4, 3).pixels == image.pixels);
  CHECK_THROWS_WITH(flashps::crop(image, 3, 0, 2, 1), Contains("crop") && Contains("not inside the 4x3 image"));
  CHECK_THROWS_AS(flashps::crop(image, -1, 0, 1, 1), flashps::Error);
  CHECK_THROWS_AS(flashps::crop(image, 0, 0, 0, 1), flashps::Error);

  Image canvas(4, 3, 1, 0);
  flashps::paste(canvas, Image(2, 2, 1, 9), 1, 1);
  CHECK(canvas.pixels == Bytes{0, 0, 0, 0, 0, 9, 9, 0, 0, 9, 9, 0});
  flashps::paste(canvas, image_from(2, 2, 1, {1, 2, 3, 4}), -1, 2);  // clipped to its bottom-right 1x1
  CHECK(canvas.pixels == Bytes{0, 0, 0, 0, 0, 9, 9, 0, 2, 9, 9, 0});
  flashps::paste(canvas, Image(2, 2, 1, 5), 4, 0);  // entirely outside: nothing
  CHECK(canvas.at(3, 0) == 0);
  CHECK_THROWS_WITH(flashps::paste(canvas, Image(1, 1, 3), 0, 0), Contains("paste: source has 3 channels"));
}

TEST_CASE("composite blends by the mask and checks sizes", "[mask]") {
  const Image original(3, 1, 3, 100);
  const Image generated(3, 1, 3, 200);
  const Image alpha = image_from(3, 1, 1, {0, 128, 255});
  const Image out = flashps::composite(original, generated, alpha);
  // (100 * 127 + 200 * 128 + 127) / 255 = 150
  CHECK(out.pixels == Bytes{100, 100, 100, 150, 150, 150, 200, 200, 200});
  // 10 * 127/255 + 11 * 128/255 = 10.502: rounded, not truncated.
  CHECK(flashps::composite(Image(1, 1, 1, 10), Image(1, 1, 1, 11), Image(1, 1, 1, 128)).pixels == Bytes{11});
  CHECK_THROWS_WITH(flashps::composite(original, Image(3, 1, 4), alpha),
                    Contains("composite: generated image is 3x1x4 but the original is 3x1x3"));
  CHECK_THROWS_WITH(flashps::composite(original, generated, Image(2, 1, 1)), Contains("composite: mask is 2x1x1"));
}

TEST_CASE("mask_ratio and mask_bounding_box", "[mask]") {
  const Image mask = mask_from({"......", "..#...", ".....#", "....#.", "......"});
  CHECK(flashps::mask_ratio(mask) == Approx(3.0 / 30.0));
  const flashps::PixelBox box = flashps::mask_bounding_box(mask);
  CHECK(box.x == 2);
  CHECK(box.y == 1);
  CHECK(box.w == 4);
  CHECK(box.h == 3);
  CHECK_FALSE(box.empty());

  const Image blank(5, 5, 1, 127);
  CHECK(flashps::mask_ratio(blank) == 0.0);
  CHECK(flashps::mask_bounding_box(blank).empty());
  CHECK(flashps::mask_ratio(Image()) == 0.0);
  CHECK(flashps::mask_ratio(Image(2, 2, 1, 128)) == 1.0);
}
