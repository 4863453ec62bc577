#include "workload/random_masks.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace flashps::workload {
namespace {

class Canvas {
 public:
  Canvas(int64_t height, int64_t width) : height(height), width(width), pixels(height * width, 0) {}

  void disc(double cy, double cx, double radius) {
    ellipse(cy, cx, radius, radius, 0.0);
  }
  void ellipse(double cy, double cx, double ry, double rx, double angle) {
    const double extent = std::max(ry, rx) + 1;
    const double c = std::cos(angle), s = std::sin(angle);
    for (int64_t y = std::max<int64_t>(0, cy - extent); y <= std::min<int64_t>(height - 1, cy + extent); ++y)
      for (int64_t x = std::max<int64_t>(0, cx - extent); x <= std::min<int64_t>(width - 1, cx + extent); ++x) {
        const double dy = y + 0.5 - cy, dx = x + 0.5 - cx;
        const double u = (dx * c + dy * s) / rx, v = (-dx * s + dy * c) / ry;
        if (u * u + v * v <= 1.0) set(y, x);
      }
  }
  void box(double top, double left, double bottom, double right) {
    for (int64_t y = std::max<int64_t>(0, top); y < std::min<int64_t>(height, bottom); ++y)
      for (int64_t x = std::max<int64_t>(0, left); x < std::min<int64_t>(width, right); ++x) set(y, x);
  }
  double ratio() const { return static_cast<double>(count) / (height * width); }
  at::Tensor tensor() const {
    at::Tensor out = at::empty({height, width});
    float* data = out.data_ptr<float>();
    for (int64_t i = 0; i < height * width; ++i) data[i] = pixels[i];
    return out;
  }

  const int64_t height, width;

 private:
  void set(int64_t y, int64_t x) {
    uint8_t& pixel = pixels[y * width + x];
    count += pixel == 0;
    pixel = 1;
  }
  std::vector<uint8_t> pixels;
  int64_t count = 0;
};

double uniform(std::mt19937_64& rng, double low, double high) {
  return std::uniform_real_distribution<double>(low, high)(rng);
}

// A stroke: a random walk of discs, like a brush dragged across the image.
void brush_stroke(Canvas& canvas, double target_area, std::mt19937_64& rng) {
  const double side = std::sqrt(static_cast<double>(canvas.height * canvas.width));
  const double radius = std::clamp(std::sqrt(target_area) * uniform(rng, 0.15, 0.4), 2.0, side * 0.2);
  double y = uniform(rng, 0, canvas.height), x = uniform(rng, 0, canvas.width);
  double angle = uniform(rng, 0, 2 * M_PI);
  const int segments = std::uniform_int_distribution<int>(2, 6)(rng);
  for (int segment = 0; segment < segments; ++segment) {
    const double length = uniform(rng, 0.15, 0.5) * side;
    angle += uniform(rng, -1.2, 1.2);
    for (double t = 0; t < length; t += radius * 0.5) {
      canvas.disc(y, x, radius);
      y = std::clamp(y + std::sin(angle) * radius * 0.5, 0.0, double(canvas.height - 1));
      x = std::clamp(x + std::cos(angle) * radius * 0.5, 0.0, double(canvas.width - 1));
    }
  }
}

void blob(Canvas& canvas, double target_area, std::mt19937_64& rng) {
  const double radius = std::sqrt(target_area / M_PI) * uniform(rng, 0.6, 1.1);
  const double cy = uniform(rng, 0, canvas.height), cx = uniform(rng, 0, canvas.width);
  const double angle = uniform(rng, 0, M_PI);
  // A main ellipse with a few lobes: irregular outlines like a lasso selection.
  canvas.ellipse(cy, cx, radius * uniform(rng, 0.6, 1.4), radius * uniform(rng, 0.6, 1.4), angle);
  for (int lobe = 0; lobe < 3; ++lobe) {
    const double a = uniform(rng, 0, 2 * M_PI);
    canvas.disc(cy + std::sin(a) * radius * 0.8, cx + std::cos(a) * radius * 0.8, radius * uniform(rng, 0.3, 0.6));
  }
}

void box(Canvas& canvas, double target_area, std::mt19937_64& rng) {
  const double aspect = std::exp(uniform(rng, -0.8, 0.8));
  const double h = std::min<double>(canvas.height, std::sqrt(target_area * aspect));
  const double w = std::min<double>(canvas.width, target_area / std::max(h, 1.0));
  const double top = uniform(rng, 0, std::max(1.0, canvas.height - h));
  const double left = uniform(rng, 0, std::max(1.0, canvas.width - w));
  canvas.box(top, left, top + h, left + w);
}

}  // namespace

at::Tensor random_mask(int64_t height, int64_t width, double target_ratio, std::mt19937_64& rng,
                       MaskShape shape) {
  Canvas canvas(height, width);
  const double total = static_cast<double>(height * width);
  target_ratio = std::clamp(target_ratio, 0.0, 1.0);
  for (int attempt = 0; attempt < 64 && canvas.ratio() < target_ratio; ++attempt) {
    const double missing = (target_ratio - canvas.ratio()) * total;
    MaskShape kind = shape;
    if (kind == MaskShape::any) kind = static_cast<MaskShape>(std::uniform_int_distribution<int>(0, 2)(rng));
    switch (kind) {
      case MaskShape::brush: brush_stroke(canvas, missing, rng); break;
      case MaskShape::blob: blob(canvas, missing, rng); break;
      default: box(canvas, missing, rng); break;
    }
  }
  return canvas.tensor();
}

}  // namespace flashps::workload
