#include "core/metrics/image_metrics.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>

namespace flashps {
namespace {

at::Tensor gaussian_window(int64_t size, double sigma) {
  at::Tensor x = at::arange(size, at::kDouble) - double(size - 1) / 2.0;
  at::Tensor g = at::exp(-(x * x) / (2 * sigma * sigma));
  g = g / g.sum();
  return at::outer(g, g).to(at::kFloat);
}

}  // namespace

double ssim(const at::Tensor& a, const at::Tensor& b, double data_range, const at::Tensor& weight) {
  const int64_t channels = a.size(0);
  at::Tensor x = a.to(at::kFloat).unsqueeze(0), y = b.to(at::kFloat).unsqueeze(0);
  at::Tensor window = gaussian_window(11, 1.5).expand({channels, 1, 11, 11}).contiguous();
  auto filter = [&](const at::Tensor& t) { return at::conv2d(t, window, at::Tensor(), at::IntArrayRef{1, 1}, at::IntArrayRef{0, 0}, at::IntArrayRef{1, 1}, channels); };
  at::Tensor mu_x = filter(x), mu_y = filter(y);
  at::Tensor sigma_xx = filter(x * x) - mu_x * mu_x;
  at::Tensor sigma_yy = filter(y * y) - mu_y * mu_y;
  at::Tensor sigma_xy = filter(x * y) - mu_x * mu_y;
  const double c1 = std::pow(0.01 * data_range, 2), c2 = std::pow(0.03 * data_range, 2);
  at::Tensor map = ((2 * mu_x * mu_y + c1) * (2 * sigma_xy + c2)) /
                   ((mu_x * mu_x + mu_y * mu_y + c1) * (sigma_xx + sigma_yy + c2));
  map = map.mean(1).squeeze(0);  // [H-10, W-10]
  if (!weight.defined()) return map.mean().item<double>();
  at::Tensor w = weight.to(at::kFloat).slice(0, 5, 5 + map.size(0)).slice(1, 5, 5 + map.size(1));
  const double total = w.sum().item<double>();
  if (total <= 0) return std::numeric_limits<double>::quiet_NaN();
  return (map * w).sum().item<double>() / total;
}

double psnr(const at::Tensor& a, const at::Tensor& b, double data_range, const at::Tensor& weight) {
  at::Tensor squared = (a.to(at::kDouble) - b.to(at::kDouble)).pow(2);
  double mse;
  if (weight.defined()) {
    at::Tensor w = weight.to(at::kDouble).expand_as(squared);
    mse = (squared * w).sum().item<double>() / std::max(w.sum().item<double>(), 1e-12);
  } else {
    mse = squared.mean().item<double>();
  }
  if (mse <= 0) return std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(data_range * data_range / mse);
}

double block_step_ratio(const at::Tensor& image, int64_t block, const at::Tensor& weight) {
  const at::Tensor pixels = image.to(at::kDouble);
  const at::Tensor inside = weight.defined() ? (weight > 0) : at::ones({image.size(-2), image.size(-1)}, at::kBool);
  double border_sum = 0, border_count = 0, inner_sum = 0, inner_count = 0;
  for (int64_t dim : {-1, -2}) {  // columns, then rows
    const int64_t length = pixels.size(dim);
    if (length < 2) continue;
    const at::Tensor steps = (pixels.narrow(dim, 1, length - 1) - pixels.narrow(dim, 0, length - 1)).abs().mean(0);
    const at::Tensor pair = inside.narrow(dim, 1, length - 1) & inside.narrow(dim, 0, length - 1);
    // Pair i joins pixels i and i + 1: it crosses a border when i + 1 is a multiple of block.
    at::Tensor crosses = ((at::arange(1, length, at::kLong) % block) == 0);
    crosses = dim == -1 ? crosses.view({1, -1}) : crosses.view({-1, 1});
    const at::Tensor border = pair & crosses, inner = pair & crosses.logical_not();
    border_sum += steps.masked_select(border).sum().item<double>();
    border_count += border.sum().item<double>();
    inner_sum += steps.masked_select(inner).sum().item<double>();
    inner_count += inner.sum().item<double>();
  }
  if (border_count == 0 || inner_count == 0 || inner_sum == 0) return std::numeric_limits<double>::quiet_NaN();
  return (border_sum / border_count) / (inner_sum / inner_count);
}

double detail_energy(const at::Tensor& image, const at::Tensor& weight) {
  const at::Tensor pixels = image.to(at::kDouble);
  const at::Tensor inside = weight.defined() ? (weight > 0) : at::ones({image.size(-2), image.size(-1)}, at::kBool);
  double sum = 0, count = 0;
  for (int64_t dim : {-1, -2}) {
    const int64_t length = pixels.size(dim);
    if (length < 2) continue;
    const at::Tensor steps = (pixels.narrow(dim, 1, length - 1) - pixels.narrow(dim, 0, length - 1)).abs().mean(0);
    const at::Tensor pair = inside.narrow(dim, 1, length - 1) & inside.narrow(dim, 0, length - 1);
    sum += steps.masked_select(pair).sum().item<double>();
    count += pair.sum().item<double>();
  }
  if (count == 0) return std::numeric_limits<double>::quiet_NaN();
  return sum / count;
}

}  // namespace flashps
