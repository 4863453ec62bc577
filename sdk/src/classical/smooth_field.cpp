#include "classical/smooth_field.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/diagnostics/error.h"

namespace flashps {

namespace {

// Separable Gaussian blur of [C, H, W], edges replicated.
at::Tensor gaussian_blur(const at::Tensor& image, double sigma) {
  const int64_t radius = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(3 * sigma)));
  const at::Tensor taps = at::arange(-radius, radius + 1, image.options());
  at::Tensor kernel = at::exp(-taps.pow(2) / (2 * sigma * sigma));
  kernel = kernel / kernel.sum();
  const int64_t channels = image.size(0), taps_count = 2 * radius + 1;
  at::Tensor x = at::replication_pad2d(image.unsqueeze(0), {radius, radius, radius, radius});
  const at::Tensor no_bias;
  const std::vector<int64_t> ones = {1, 1}, zeros = {0, 0};
  x = at::conv2d(x, kernel.view({1, 1, 1, taps_count}).expand({channels, 1, 1, taps_count}).contiguous(), no_bias,
                 /*stride=*/at::IntArrayRef(ones), /*padding=*/at::IntArrayRef(zeros),
                 /*dilation=*/at::IntArrayRef(ones), /*groups=*/channels);
  x = at::conv2d(x, kernel.view({1, 1, taps_count, 1}).expand({channels, 1, taps_count, 1}).contiguous(), no_bias,
                 /*stride=*/at::IntArrayRef(ones), /*padding=*/at::IntArrayRef(zeros),
                 /*dilation=*/at::IntArrayRef(ones), /*groups=*/channels);
  return x[0];
}

// Reduction keeping the blur at about 3 low-resolution pixels: few taps, smooth interpolation.
int64_t reduction_for(double sigma) { return std::max<int64_t>(1, static_cast<int64_t>(sigma / 3)); }

// Area averaging (variance f^2 / 12) and bilinear reading (f^2 / 6) blur too; the low-resolution
// Gaussian supplies the rest of sigma^2.
double low_sigma(double sigma, int64_t factor) {
  if (factor == 1) return sigma;
  const double f = static_cast<double>(factor);
  return std::sqrt(std::max(sigma * sigma - f * f / 4, f * f / 4)) / f;
}

// [C, H, W] (float) averaged over f x f cells, each pixel weighted by `weight` [H, W] (bool or
// float) when given; partial cells at the far edges average what they hold. Returns the weighted
// sums' means and, when weighted, the weights' means as a last channel. One pass over the pixels
// (the full-resolution products avg_pool would need are never made).
at::Tensor area_average(const at::Tensor& image, int64_t factor, const at::Tensor& weight = {}) {
  const at::Tensor pixels = image.to(at::kFloat).contiguous();
  const int64_t channels = pixels.size(0), height = pixels.size(1), width = pixels.size(2);
  const bool weighted = weight.defined();
  if (factor == 1 && !weighted) return pixels;
  // Bool weights (a mask) are read as they are: a float copy would be a full-size image more.
  const at::Tensor weights = !weighted                           ? at::Tensor()
                             : weight.scalar_type() == at::kBool ? weight.contiguous()
                                                                 : weight.to(at::kFloat).contiguous();
  const bool* bool_weights = weighted && weights.scalar_type() == at::kBool ? weights.data_ptr<bool>() : nullptr;
  const float* float_weights = weighted && !bool_weights ? weights.data_ptr<float>() : nullptr;
  const int64_t low_height = (height + factor - 1) / factor, low_width = (width + factor - 1) / factor;
  const int64_t planes = channels + (weighted ? 1 : 0);
  at::Tensor sums = at::zeros({planes, low_height, low_width}, at::kDouble);
  double* sum = sums.data_ptr<double>();
  const float* values = pixels.data_ptr<float>();
  const int64_t low_plane = low_height * low_width, plane = height * width;
  at::parallel_for(0, planes, 1, [&](int64_t first, int64_t end) {
    for (int64_t c = first; c < end; ++c)
      for (int64_t y = 0; y < height; ++y) {
        double* cells = sum + c * low_plane + (y / factor) * low_width;
        const float* row = c < channels ? values + c * plane + y * width : nullptr;
        const int64_t row_start = y * width;
        for (int64_t cell = 0; cell < low_width; ++cell) {
          const int64_t x0 = cell * factor, x1 = std::min(width, x0 + factor);
          double total = 0;
          if (bool_weights) {
            for (int64_t x = x0; x < x1; ++x) total += bool_weights[row_start + x] ? (row ? row[x] : 1.0f) : 0.0f;
          } else if (float_weights) {
            for (int64_t x = x0; x < x1; ++x) total += (row ? row[x] : 1.0f) * float_weights[row_start + x];
          } else {
            for (int64_t x = x0; x < x1; ++x) total += row[x];
          }
          cells[cell] += total;
        }
      }
  });
  // Pixels per cell (fewer in the last row and column of cells).
  const at::Tensor row_counts = at::full({low_height}, static_cast<double>(factor), at::kDouble);
  const at::Tensor column_counts = at::full({low_width}, static_cast<double>(factor), at::kDouble);
  row_counts[low_height - 1] = static_cast<double>(height - (low_height - 1) * factor);
  column_counts[low_width - 1] = static_cast<double>(width - (low_width - 1) * factor);
  return (sums / (row_counts.unsqueeze(1) * column_counts.unsqueeze(0))).to(at::kFloat);
}

void check_blur_input(const at::Tensor& image, double sigma, int64_t pad) {
  if (image.dim() != 3 || image.size(1) < 1 || image.size(2) < 1 || !(sigma > 0) || pad < 0)
    throw Error("smooth field: expected a non-empty image [C, H, W], a positive sigma and a padding >= 0");
}

}  // namespace

SmoothField SmoothField::blurred(const at::Tensor& image, double sigma, int64_t pad) {
  check_blur_input(image, sigma, pad);
  const int64_t factor = reduction_for(sigma), low_pad = (pad + factor - 1) / factor + 1;
  at::Tensor low = area_average(image, factor);
  low = at::replication_pad2d(low.unsqueeze(0), {low_pad, low_pad, low_pad, low_pad})[0];
  return SmoothField(gaussian_blur(low, low_sigma(sigma, factor)), factor, -low_pad * factor);
}

SmoothField SmoothField::normalized(const at::Tensor& image, const at::Tensor& weight, double sigma, int64_t pad) {
  check_blur_input(image, sigma, pad);
  if (weight.dim() != 2 || weight.size(0) != image.size(1) || weight.size(1) != image.size(2))
    throw Error("smooth field: the weight must be [H, W] like the image");
  const int64_t factor = reduction_for(sigma), low_pad = (pad + factor - 1) / factor + 1;
  const at::Tensor averages =
      at::constant_pad_nd(area_average(image, factor, weight), {low_pad, low_pad, low_pad, low_pad}, 0);
  const int64_t channels = image.size(0);
  const double blur_sigma = low_sigma(sigma, factor);
  const at::Tensor blurred = gaussian_blur(averages, blur_sigma);
  return SmoothField(blurred.narrow(0, 0, channels) / blurred.narrow(0, channels, 1).clamp_min(1e-6), factor,
                     -low_pad * factor);
}

at::Tensor SmoothField::region(int64_t y, int64_t x, int64_t height, int64_t width) const {
  const int64_t f = factor_, low_height = low_.size(1), low_width = low_.size(2);
  if (height < 1 || width < 1 || y < origin_ || x < origin_ || y + height > origin_ + low_height * f ||
      x + width > origin_ + low_width * f)
    throw Error("smooth field: region outside the field's extent");
  if (f == 1) return low_.narrow(1, y - origin_, height).narrow(2, x - origin_, width);
  // Interpolating a block one low pixel wider on each side than the region reads, and clamped
  // only where the whole field is, gives the same values as interpolating the whole field.
  auto span = [f, this](int64_t start, int64_t count, int64_t low_size) {
    const int64_t first = std::max<int64_t>(0, (start - origin_) / f - 1);
    const int64_t end = std::min(low_size, (start + count - 1 - origin_) / f + 2);
    return std::make_pair(first, end);
  };
  const auto [row_first, row_end] = span(y, height, low_height);
  const auto [column_first, column_end] = span(x, width, low_width);
  const at::Tensor block =
      low_.narrow(1, row_first, row_end - row_first).narrow(2, column_first, column_end - column_first);
  const double scale = static_cast<double>(f);
  const at::Tensor upsampled = at::upsample_bilinear2d(
      block.unsqueeze(0), {(row_end - row_first) * f, (column_end - column_first) * f}, false, scale, scale)[0];
  return upsampled.narrow(1, y - origin_ - row_first * f, height).narrow(2, x - origin_ - column_first * f, width);
}

at::Tensor SmoothField::averaged_weights(const std::vector<int64_t>& starts, int64_t size, int64_t axis_length) const {
  const int64_t f = factor_;
  at::Tensor weights = at::zeros({static_cast<int64_t>(starts.size()), axis_length}, at::kDouble);
  auto table = weights.accessor<double, 2>();
  for (size_t i = 0; i < starts.size(); ++i) {
    if (starts[i] < origin_ || starts[i] + size > origin_ + axis_length * f)
      throw Error("smooth field: box outside the field's extent");
    for (int64_t p = starts[i]; p < starts[i] + size; ++p) {
      // As upsample_bilinear2d (align_corners = false) reads full-resolution pixel p.
      const double source = std::max((p - origin_ + 0.5) / f - 0.5, 0.0);
      const int64_t low = std::min(static_cast<int64_t>(source), axis_length - 1);
      const int64_t high = low < axis_length - 1 ? low + 1 : low;
      const double fraction = source - static_cast<double>(low);
      table[i][low] += (1 - fraction) / size;
      table[i][high] += fraction / size;
    }
  }
  return weights.to(low_.scalar_type());
}

at::Tensor SmoothField::box_means(const std::vector<int64_t>& rows, const std::vector<int64_t>& columns,
                                  int64_t size) const {
  if (size < 1) throw Error("smooth field: box size must be positive");
  const at::Tensor row_weights = averaged_weights(rows, size, low_.size(1));
  const at::Tensor column_weights = averaged_weights(columns, size, low_.size(2));
  return at::matmul(at::matmul(row_weights, low_), column_weights.t());
}

}  // namespace flashps
