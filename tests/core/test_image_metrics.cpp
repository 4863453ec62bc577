// Image metrics of the quality benchmark: PSNR and SSIM on known cases, and the blockiness
// ratio of a mosaic against a smooth image.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <cmath>

#include "core/metrics/image_metrics.h"

using namespace flashps;

TEST_CASE("PSNR and SSIM of known differences, over a region", "[metrics]") {
  auto generator = at::detail::createCPUGenerator(2);
  at::Tensor image = at::rand({3, 32, 32}, generator) * 2 - 1;
  CHECK(std::isinf(psnr(image, image, 2.0)));
  CHECK(ssim(image, image, 2.0) == Approx(1.0));
  // A constant offset of 0.02 on a range of 2: 20 log10(2 / 0.02) = 40 dB.
  CHECK(psnr(image + 0.02, image, 2.0) == Approx(40.0).margin(1e-6));
  // Only the weighted region counts.
  at::Tensor other = image.clone();
  other.narrow(2, 16, 16).add_(0.5);
  at::Tensor left = at::zeros({32, 32});
  left.narrow(1, 0, 12).fill_(1);
  CHECK(std::isinf(psnr(other, image, 2.0, left)));
  CHECK(ssim(other, image, 2.0) < 0.99);
}

TEST_CASE("block step ratio tells a mosaic from a smooth image", "[metrics]") {
  auto generator = at::detail::createCPUGenerator(3);
  // A smooth ramp with noise: neighbours differ alike everywhere.
  at::Tensor ramp = at::linspace(-1, 1, 64).view({1, 1, 64}).expand({3, 64, 64}).contiguous();
  at::Tensor texture = ramp + at::rand({3, 64, 64}, generator) * 0.1;
  CHECK(block_step_ratio(texture, 8) == Approx(1.0).margin(0.2));
  // Flat 8x8 blocks with a little texture: steps only at borders.
  at::Tensor mosaic = (at::rand({3, 8, 8}, generator) - 0.5).repeat_interleave(8, 1).repeat_interleave(8, 2) +
                      at::rand({3, 64, 64}, generator) * 0.02;
  CHECK(block_step_ratio(mosaic, 8) > 5);
  // Restricted to one block, there are no border pairs.
  at::Tensor one_block = at::zeros({64, 64});
  one_block.narrow(0, 8, 8).narrow(1, 8, 8).fill_(1);
  CHECK(std::isnan(block_step_ratio(mosaic, 8, one_block)));
}

TEST_CASE("detail energy: zero when flat, the step size of a checkerboard, only inside the region", "[metrics]") {
  at::Tensor flat = at::full({3, 16, 16}, 0.3);
  CHECK(detail_energy(flat) == Approx(0.0));
  // A checkerboard of +-0.25: every neighbour pair differs by 0.5.
  at::Tensor rows = at::arange(16).view({16, 1}), columns = at::arange(16).view({1, 16});
  at::Tensor checker = (((rows + columns) % 2) * 0.5 - 0.25).to(at::kFloat).expand({3, 16, 16}).contiguous();
  CHECK(detail_energy(checker) == Approx(0.5));
  // Flat on the left, checkered on the right: the left half alone reads 0.
  at::Tensor half = checker.clone();
  half.narrow(2, 0, 8).fill_(0.3);
  at::Tensor left = at::zeros({16, 16});
  left.narrow(1, 0, 8).fill_(1);
  CHECK(detail_energy(half, left) == Approx(0.0));
  CHECK(detail_energy(half, 1 - left) == Approx(0.5));
  CHECK(std::isnan(detail_energy(half, at::zeros({16, 16}))));
}
