#include "core/mask/mask_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/diagnostics/error.h"

namespace flashps {
namespace {

std::string size_text(const Image& image) {
  return std::to_string(image.width) + "x" + std::to_string(image.height) + "x" + std::to_string(image.channels);
}

void check_target_size(int width, int height, const char* operation) {
  if (width <= 0 || height <= 0 || width > kMaxImageSide || height > kMaxImageSide) {
    throw Error(std::string(operation) + ": invalid target size " + std::to_string(width) + "x" +
                std::to_string(height) + " (each side must be 1.." + std::to_string(kMaxImageSide) + ")");
  }
}

// 255 where a pixel equal to `seed` lies within Euclidean distance `radius`, exactly. Within one
// column only the vertically nearest seed matters; at vertical distance g it covers the row span
// |dx| <= floor(sqrt(radius^2 - g^2)). A vertical two-pass distance gives g per pixel, and per
// row a difference array unions the spans: linear in the pixel count whatever the radius.
Image within_distance(const Image& binary, uint8_t seed, int64_t radius) {
  const int width = binary.width, height = binary.height;
  // No two pixels are width + height apart, so larger radii act alike (and keep the table small).
  const int reach_limit = static_cast<int>(std::min<int64_t>(radius, int64_t{width} + height));
  std::vector<int> half_span(reach_limit + 1);
  for (int g = 0; g <= reach_limit; ++g) {
    const int64_t remaining = int64_t{reach_limit} * reach_limit - int64_t{g} * g;
    int64_t root = static_cast<int64_t>(std::sqrt(static_cast<double>(remaining)));
    while (root * root > remaining) --root;
    while ((root + 1) * (root + 1) <= remaining) ++root;
    half_span[g] = static_cast<int>(root);
  }

  const int32_t far = reach_limit + 1;  // "out of reach"; also keeps the counts from overflowing
  std::vector<int32_t> vertical(binary.pixel_count());
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const size_t i = static_cast<size_t>(y) * width + x;
      vertical[i] = binary.pixels[i] == seed ? 0 : (y == 0 ? far : std::min(far, vertical[i - width] + 1));
    }
  }
  for (int y = height - 2; y >= 0; --y) {
    for (int x = 0; x < width; ++x) {
      const size_t i = static_cast<size_t>(y) * width + x;
      vertical[i] = std::min(vertical[i], vertical[i + width] + 1);
    }
  }

  Image result(width, height, 1);
  std::vector<int32_t> span_edges(width + 1);
  for (int y = 0; y < height; ++y) {
    std::fill(span_edges.begin(), span_edges.end(), 0);
    const int32_t* row = &vertical[static_cast<size_t>(y) * width];
    for (int x = 0; x < width; ++x) {
      if (row[x] > reach_limit) continue;
      const int span = half_span[row[x]];
      ++span_edges[std::max(0, x - span)];
      --span_edges[static_cast<size_t>(std::min<int64_t>(width, int64_t{x} + span + 1))];
    }
    int32_t covering = 0;
    uint8_t* out = &result.pixels[static_cast<size_t>(y) * width];
    for (int x = 0; x < width; ++x) {
      covering += span_edges[x];
      out[x] = covering > 0 ? 255 : 0;
    }
  }
  return result;
}

// Sum of value(clamp(i, 0, n - 1)) over i in [-r, r], in O(min(r, n)) steps.
template <class Value>
double clamped_window_sum(Value value, int n, int r) {
  double sum = static_cast<double>(r) * value(0);
  for (int i = 0; i <= std::min(r, n - 1); ++i) sum += value(i);
  if (r > n - 1) sum += static_cast<double>(r - (n - 1)) * value(n - 1);
  return sum;
}

// Box blur of radius r along rows, edge pixels replicated; O(1) per pixel with a running sum.
void blur_rows(const std::vector<float>& in, std::vector<float>& out, int width, int height, int r) {
  const double scale = 1.0 / (2 * r + 1);
  for (int y = 0; y < height; ++y) {
    const float* row = &in[static_cast<size_t>(y) * width];
    float* destination = &out[static_cast<size_t>(y) * width];
    double sum = clamped_window_sum([&](int i) { return row[i]; }, width, r);
    for (int x = 0; x < width; ++x) {
      destination[x] = static_cast<float>(sum * scale);
      sum += row[std::min(x + r + 1, width - 1)] - row[std::max(x - r, 0)];
    }
  }
}

// The same along columns, sliding a whole row of sums at once to stay cache-friendly.
void blur_columns(const std::vector<float>& in, std::vector<float>& out, int width, int height, int r) {
  const double scale = 1.0 / (2 * r + 1);
  std::vector<double> sums(width);
  for (int x = 0; x < width; ++x) {
    sums[x] = clamped_window_sum([&](int i) { return in[static_cast<size_t>(i) * width + x]; }, height, r);
  }
  for (int y = 0; y < height; ++y) {
    const float* entering = &in[static_cast<size_t>(std::min(y + r + 1, height - 1)) * width];
    const float* leaving = &in[static_cast<size_t>(std::max(y - r, 0)) * width];
    float* destination = &out[static_cast<size_t>(y) * width];
    for (int x = 0; x < width; ++x) {
      destination[x] = static_cast<float>(sums[x] * scale);
      sums[x] += entering[x] - leaving[x];
    }
  }
}

struct Tap {
  int index;
  float weight;
};

// For each target index along one axis, the source indices and weights that make it up.
std::vector<std::vector<Tap>> resampling_taps(int source_size, int target_size) {
  const double scale = static_cast<double>(source_size) / target_size;
  std::vector<std::vector<Tap>> taps(target_size);
  for (int i = 0; i < target_size; ++i) {
    if (scale > 2.0) {
      // Area average: the target pixel covers source interval [start, end).
      const double start = i * scale, end = (i + 1) * scale;
      for (int j = static_cast<int>(start); j < source_size && j < end; ++j) {
        const double overlap = std::min(end, j + 1.0) - std::max(start, static_cast<double>(j));
        if (overlap > 0) taps[i].push_back({j, static_cast<float>(overlap / scale)});
      }
    } else {
      const double centre = std::clamp((i + 0.5) * scale - 0.5, 0.0, source_size - 1.0);
      const int low = static_cast<int>(centre);
      const double fraction = centre - low;
      taps[i].push_back({low, static_cast<float>(1.0 - fraction)});
      if (fraction > 0) taps[i].push_back({low + 1, static_cast<float>(fraction)});
    }
  }
  return taps;
}

uint8_t to_byte(float value) { return static_cast<uint8_t>(std::clamp(std::lround(value), 0L, 255L)); }

}  // namespace

Image mask_values(const Image& mask) {
  check_image(mask, "mask");
  if (mask.channels == 1) return mask;
  const size_t count = mask.pixel_count();
  const int channels = mask.channels;
  auto brightest = [&](size_t i) {
    const uint8_t* pixel = &mask.pixels[i * channels];
    return std::max({pixel[0], pixel[1], pixel[2]});
  };
  // Strokes carried by alpha alone: some pixel is see-through and every visible one is black.
  bool alpha_only = false;
  if (channels == 4) {
    bool translucent = false, visible_colour = false;
    for (size_t i = 0; i < count && !visible_colour; ++i) {
      const uint8_t alpha = mask.pixels[i * 4 + 3];
      translucent |= alpha < 255;
      visible_colour |= alpha > 0 && brightest(i) > 0;
    }
    alpha_only = translucent && !visible_colour;
  }
  Image values(mask.width, mask.height, 1);
  for (size_t i = 0; i < count; ++i) {
    if (channels == 3) {
      values.pixels[i] = brightest(i);
    } else if (alpha_only) {
      values.pixels[i] = mask.pixels[i * 4 + 3];
    } else {
      values.pixels[i] = static_cast<uint8_t>((brightest(i) * mask.pixels[i * 4 + 3] + 127) / 255);
    }
  }
  return values;
}

Image binarize_mask(const Image& mask, uint8_t threshold) {
  Image binary = mask_values(mask);
  for (uint8_t& value : binary.pixels) value = value >= threshold ? 255 : 0;
  return binary;
}

Image grow_mask(const Image& mask, int pixels) {
  const Image binary = binarize_mask(mask);
  if (pixels == 0) return binary;
  const int64_t radius = std::abs(static_cast<int64_t>(pixels));
  if (pixels > 0) return within_distance(binary, 255, radius);
  // Erosion: keep the set pixels that have no unset pixel within the radius.
  Image eroded = within_distance(binary, 0, radius);
  for (uint8_t& value : eroded.pixels) value = static_cast<uint8_t>(255 - value);
  return eroded;
}

Image feather_mask(const Image& mask, int pixels) {
  if (pixels < 0) throw Error("feather_mask: negative feather width " + std::to_string(pixels));
  Image values = mask_values(mask);
  if (pixels == 0) return values;
  std::vector<float> buffer(values.pixels.begin(), values.pixels.end());
  std::vector<float> scratch(buffer.size());
  // Three boxes: their convolution is a close, smooth gaussian approximation with support exactly
  // 2 * pixels + 1, which is what makes the ramp reach `pixels` to each side.
  const int radii[3] = {(pixels + 2) / 3, (pixels + 1) / 3, pixels / 3};
  for (int radius : radii) {
    if (radius == 0) continue;
    blur_rows(buffer, scratch, values.width, values.height, radius);
    blur_columns(scratch, buffer, values.width, values.height, radius);
  }
  for (size_t i = 0; i < buffer.size(); ++i) values.pixels[i] = to_byte(buffer[i]);
  return values;
}

Image resize_nearest(const Image& image, int width, int height) {
  check_image(image, "resize_nearest");
  check_target_size(width, height, "resize_nearest");
  std::vector<int> source_x(width);
  for (int x = 0; x < width; ++x) {
    source_x[x] = static_cast<int>(std::min<int64_t>((2 * int64_t{x} + 1) * image.width / (2 * int64_t{width}), image.width - 1));
  }
  Image result(width, height, image.channels);
  for (int y = 0; y < height; ++y) {
    const int source_y =
        static_cast<int>(std::min<int64_t>((2 * int64_t{y} + 1) * image.height / (2 * int64_t{height}), image.height - 1));
    for (int x = 0; x < width; ++x) {
      std::memcpy(&result.pixels[result.offset(x, y)], &image.pixels[image.offset(source_x[x], source_y)],
                  image.channels);
    }
  }
  return result;
}

Image resize_bilinear(const Image& image, int width, int height) {
  check_image(image, "resize_bilinear");
  check_target_size(width, height, "resize_bilinear");
  const int channels = image.channels;
  const auto horizontal = resampling_taps(image.width, width);
  const auto vertical = resampling_taps(image.height, height);

  // Horizontal pass into floats (source rows x target columns), then the vertical pass.
  std::vector<float> rows(static_cast<size_t>(image.height) * width * channels, 0.0f);
  for (int y = 0; y < image.height; ++y) {
    float* destination = &rows[static_cast<size_t>(y) * width * channels];
    for (int x = 0; x < width; ++x) {
      for (const Tap& tap : horizontal[x]) {
        const uint8_t* source = &image.pixels[image.offset(tap.index, y)];
        for (int c = 0; c < channels; ++c) destination[x * channels + c] += tap.weight * source[c];
      }
    }
  }
  Image result(width, height, channels);
  const size_t row_values = static_cast<size_t>(width) * channels;
  std::vector<float> accumulator(row_values);
  for (int y = 0; y < height; ++y) {
    std::fill(accumulator.begin(), accumulator.end(), 0.0f);
    for (const Tap& tap : vertical[y]) {
      const float* source = &rows[static_cast<size_t>(tap.index) * row_values];
      for (size_t i = 0; i < row_values; ++i) accumulator[i] += tap.weight * source[i];
    }
    for (size_t i = 0; i < row_values; ++i) result.pixels[y * row_values + i] = to_byte(accumulator[i]);
  }
  return result;
}

Image crop(const Image& image, int x, int y, int w, int h) {
  check_image(image, "crop");
  if (x < 0 || y < 0 || w <= 0 || h <= 0 || int64_t{x} + w > image.width || int64_t{y} + h > image.height) {
    throw Error("crop: rectangle at (" + std::to_string(x) + ", " + std::to_string(y) + ") of size " +
                std::to_string(w) + "x" + std::to_string(h) + " is not inside the " + std::to_string(image.width) +
                "x" + std::to_string(image.height) + " image");
  }
  Image result(w, h, image.channels);
  const size_t row_bytes = static_cast<size_t>(w) * image.channels;
  for (int row = 0; row < h; ++row) {
    std::memcpy(&result.pixels[result.offset(0, row)], &image.pixels[image.offset(x, y + row)], row_bytes);
  }
  return result;
}

void paste(Image& destination, const Image& source, int x, int y) {
  check_image(destination, "paste destination");
  check_image(source, "paste source");
  if (source.channels != destination.channels) {
    throw Error("paste: source has " + std::to_string(source.channels) + " channels, destination " +
                std::to_string(destination.channels));
  }
  const int64_t left = std::max<int64_t>(0, x), right = std::min<int64_t>(destination.width, int64_t{x} + source.width);
  const int64_t top = std::max<int64_t>(0, y), bottom = std::min<int64_t>(destination.height, int64_t{y} + source.height);
  if (left >= right || top >= bottom) return;
  const size_t row_bytes = static_cast<size_t>(right - left) * source.channels;
  for (int64_t row = top; row < bottom; ++row) {
    std::memcpy(&destination.pixels[destination.offset(static_cast<int>(left), static_cast<int>(row))],
                &source.pixels[source.offset(static_cast<int>(left - x), static_cast<int>(row - y))], row_bytes);
  }
}

Image composite(const Image& original, const Image& generated, const Image& mask_alpha) {
  check_image(original, "composite original");
  check_image(generated, "composite generated");
  check_image(mask_alpha, "composite mask");
  if (generated.width != original.width || generated.height != original.height ||
      generated.channels != original.channels) {
    throw Error("composite: generated image is " + size_text(generated) + " but the original is " +
                size_text(original));
  }
  if (mask_alpha.width != original.width || mask_alpha.height != original.height) {
    throw Error("composite: mask is " + size_text(mask_alpha) + " but the original is " + size_text(original));
  }
  const Image alpha = mask_values(mask_alpha);
  Image result(original.width, original.height, original.channels);
  for (size_t i = 0; i < original.pixel_count(); ++i) {
    const int a = alpha.pixels[i];
    for (int c = 0; c < original.channels; ++c) {
      const size_t j = i * original.channels + c;
      result.pixels[j] = static_cast<uint8_t>((original.pixels[j] * (255 - a) + generated.pixels[j] * a + 127) / 255);
    }
  }
  return result;
}

Image restore_alpha(const Image& result, const Image& input, const Image& paste_alpha) {
  if (input.channels != 4) return result;
  check_image(result, "restore_alpha result");
  if (result.channels != 3 || result.width != input.width || result.height != input.height ||
      (!paste_alpha.empty() && (paste_alpha.width != input.width || paste_alpha.height != input.height))) {
    throw Error("restore_alpha: result " + size_text(result) + ", input " + size_text(input) + " and paste mask " +
                size_text(paste_alpha) + " differ");
  }
  const Image coverage = paste_alpha.empty() ? Image(input.width, input.height, 1, 0) : mask_values(paste_alpha);
  Image with_alpha(result.width, result.height, 4);
  for (size_t i = 0; i < result.pixel_count(); ++i) {
    std::memcpy(&with_alpha.pixels[i * 4], &result.pixels[i * 3], 3);
    const int kept = input.pixels[i * 4 + 3], regenerated = coverage.pixels[i];
    with_alpha.pixels[i * 4 + 3] = static_cast<uint8_t>((kept * (255 - regenerated) + 255 * regenerated + 127) / 255);
  }
  return with_alpha;
}

MaskCoverage mask_coverage(const Image& mask) {
  MaskCoverage coverage;
  if (mask.empty()) return coverage;
  const Image values = mask_values(mask);
  int left = values.width, top = values.height, right = -1, bottom = -1;
  int64_t set = 0;
  for (int y = 0; y < values.height; ++y) {
    for (int x = 0; x < values.width; ++x) {
      if (values.pixels[values.offset(x, y)] < 128) continue;
      ++set;
      left = std::min(left, x);
      right = std::max(right, x);
      top = std::min(top, y);
      bottom = std::max(bottom, y);
    }
  }
  coverage.ratio = static_cast<double>(set) / static_cast<double>(values.pixel_count());
  if (right >= 0) coverage.box = {left, top, right - left + 1, bottom - top + 1};
  return coverage;
}

double mask_ratio(const Image& mask) { return mask_coverage(mask).ratio; }

PixelBox mask_bounding_box(const Image& mask) { return mask_coverage(mask).box; }

}  // namespace flashps
