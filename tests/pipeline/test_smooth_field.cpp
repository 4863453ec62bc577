// The reduced-resolution blur matches a direct Gaussian blur closely, reads regions exactly as a
// whole-field interpolation would, and its box means equal the means of what it reads.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>

#include "core/diagnostics/error.h"
#include "classical/smooth_field.h"

using namespace flashps;

namespace {

// Direct separable Gaussian blur, edges replicated, with the radius texture transfer always used
// (3 sigma).
at::Tensor direct_blur(const at::Tensor& image, double sigma) {
  const int64_t radius = static_cast<int64_t>(std::ceil(3 * sigma));
  at::Tensor kernel = at::exp(-at::arange(-radius, radius + 1, at::kFloat).pow(2) / (2 * sigma * sigma));
  kernel = kernel / kernel.sum();
  const int64_t channels = image.size(0), taps = 2 * radius + 1;
  at::Tensor x = at::replication_pad2d(image.unsqueeze(0), {radius, radius, radius, radius});
  const std::vector<int64_t> ones = {1, 1}, zeros = {0, 0};
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{1, 1, 1, taps}, std::vector<int64_t>{1, 1, taps, 1}})
    x = at::conv2d(x, kernel.view(shape).expand({channels, 1, shape[2], shape[3]}).contiguous(), at::Tensor(),
                   at::IntArrayRef(ones), at::IntArrayRef(zeros), at::IntArrayRef(ones), channels);
  return x[0];
}

// Smooth shapes plus fine noise, in [-1, 1]: [3, 180, 200].
at::Tensor test_image() {
  auto generator = at::detail::createCPUGenerator(11);
  const at::Tensor y = at::linspace(0, 6, 180).view({1, 180, 1}), x = at::linspace(0, 7, 200).view({1, 1, 200});
  const at::Tensor phase = at::tensor({0.0f, 1.0f, 2.0f}).view({3, 1, 1});
  return (0.6 * at::sin(y + phase) * at::cos(x - phase) + 0.3 * (at::rand({3, 180, 200}, generator) - 0.5))
      .clamp(-1, 1);
}

}  // namespace

TEST_CASE("smooth field blurs like a direct Gaussian at any sigma", "[pipeline][texture]") {
  const at::Tensor image = test_image();
  for (double sigma : {2.0, 9.0, 19.5}) {
    const SmoothField field = SmoothField::blurred(image, sigma, 16);
    CHECK(field.factor() == std::max<int64_t>(1, static_cast<int64_t>(sigma / 3)));
    const at::Tensor error = (field.region(0, 0, 180, 200) - direct_blur(image, sigma)).abs();
    // Away from the edges (where replicating a low-resolution cell differs from replicating a
    // pixel) the blurs agree to a small fraction of the image's range (about 1.4).
    const int64_t edge = static_cast<int64_t>(2 * sigma);
    const at::Tensor inner = error.narrow(1, edge, 180 - 2 * edge).narrow(2, edge, 200 - 2 * edge);
    INFO("sigma " << sigma << ": max error " << error.max().item<double>() << ", inside " << inner.max().item<double>()
                  << ", mean " << error.mean().item<double>());
    if (sigma < 6) {
      CHECK(error.max().item<double>() < 1e-5);  // the same blur
    } else {
      CHECK(inner.max().item<double>() < 0.01);
      CHECK(error.max().item<double>() < 0.08);
      CHECK(error.mean().item<double>() < 0.006);
    }
  }
}

TEST_CASE("smooth field's normalised blur ignores unweighted pixels", "[pipeline][texture]") {
  // Left half flat 0.5, right half -0.5 and unweighted: the field stays 0.5 everywhere it is read.
  at::Tensor image = at::full({3, 120, 160}, 0.5f);
  image.narrow(2, 80, 80).fill_(-0.5);
  at::Tensor weight = at::ones({120, 160});
  weight.narrow(1, 80, 80).zero_();
  const SmoothField field = SmoothField::normalized(image, weight, 12.0, 8);
  CHECK((field.region(-8, -8, 136, 120) - 0.5).abs().max().item<double>() < 1e-4);
}

TEST_CASE("smooth field regions and box means agree with reading the whole field", "[pipeline][texture]") {
  const at::Tensor image = test_image();
  const SmoothField field = SmoothField::blurred(image, 13.0, 20);
  REQUIRE(field.factor() == 4);
  const at::Tensor whole = field.region(-20, -20, 220, 240);
  // A small region at an odd offset reads the same values as the whole.
  const at::Tensor part = field.region(37, -11, 25, 42);
  CHECK((part - whole.narrow(1, 57, 25).narrow(2, 9, 42)).abs().max().item<double>() < 1e-5);
  // Box means are the means of the values read.
  const std::vector<int64_t> rows = {-20, 3, 77, 150}, columns = {-5, 0, 101, 170};
  const int64_t size = 30;
  const at::Tensor means = field.box_means(rows, columns, size);
  REQUIRE(means.sizes() == at::IntArrayRef({3, 4, 4}));
  for (size_t i = 0; i < rows.size(); ++i)
    for (size_t j = 0; j < columns.size(); ++j) {
      const at::Tensor box = whole.narrow(1, rows[i] + 20, size).narrow(2, columns[j] + 20, size);
      CHECK((means.select(1, i).select(1, j) - box.mean({1, 2})).abs().max().item<double>() < 1e-5);
    }
  CHECK_THROWS_AS(field.region(-100, 0, 10, 10), Error);
  CHECK_THROWS_AS(field.box_means({200}, {0}, 30), Error);
}
