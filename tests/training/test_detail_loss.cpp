// The texture loss rewards a fill as detailed as the photo wherever its grain lies, unlike a
// per-pixel loss; it is zero for a match and about one for a flat fill.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>

#include "core/error.h"
#include "training/detail_loss.h"

using namespace flashps;
using namespace flashps::training;

TEST_CASE("local detail is the neighbour step per window", "[training][detail]") {
  // Left half flat, right half a checkerboard of +-0.25 (every step 0.5).
  at::Tensor rows = at::arange(16).view({16, 1}), columns = at::arange(16).view({1, 16});
  at::Tensor image = (((rows + columns) % 2) * 0.5 - 0.25).to(at::kFloat).expand({3, 16, 16}).contiguous();
  image.narrow(2, 0, 8).fill_(0.1);
  const at::Tensor detail = local_detail(image, 8);
  REQUIRE(detail.sizes() == at::IntArrayRef({2, 2}));
  // Flat windows have no steps except where they touch the checkerboard (their last column).
  CHECK(detail[0][0].item<double>() < 0.05);
  // Checkered windows: two steps of 0.5 per pixel, except the zero padding at the far edges.
  CHECK(detail[0][1].item<double>() > 0.8);
  CHECK_THROWS_AS(local_detail(image, 5), Error);
}

TEST_CASE("detail matching ignores where the grain lies, not how much there is", "[training][detail]") {
  auto generator = at::detail::createCPUGenerator(7);
  const at::Tensor truth = at::rand({3, 32, 32}, generator) * 0.4 - 0.2;
  const at::Tensor weight = at::ones({4, 4});
  CHECK(detail_matching_loss(truth, truth, weight, 8).item<double>() == Approx(0.0).margin(1e-9));
  // A flat fill has no detail: the loss is 1.
  const at::Tensor flat = at::zeros({3, 32, 32});
  CHECK(detail_matching_loss(flat, truth, weight, 8).item<double>() == Approx(1.0).margin(1e-6));
  // Another draw of the same noise: per-pixel it is as far from the truth as can be, yet its
  // detail matches closely, so the loss is far below the flat fill's.
  const at::Tensor other_grain = at::rand({3, 32, 32}, generator) * 0.4 - 0.2;
  CHECK(detail_matching_loss(other_grain, truth, weight, 8).item<double>() < 0.05);
  CHECK((other_grain - truth).pow(2).mean().item<double>() > (flat - truth).pow(2).mean().item<double>());
  // Windows with zero weight do not count.
  at::Tensor left = at::zeros({4, 4});
  left.narrow(1, 0, 2).fill_(1);
  at::Tensor half_flat = truth.clone();
  half_flat.narrow(2, 24, 8).zero_();
  CHECK(detail_matching_loss(half_flat, truth, left, 8).item<double>() == Approx(0.0).margin(1e-9));
  // It pulls a flat prediction towards more detail.
  at::Tensor prediction = (truth * 0.1).requires_grad_(true);
  detail_matching_loss(prediction, truth, weight, 8).backward();
  REQUIRE(prediction.grad().defined());
  CHECK(prediction.grad().abs().sum().item<double>() > 0);
}
