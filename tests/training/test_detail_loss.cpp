// The texture loss rewards a fill as detailed as the photo wherever its grain lies, unlike a
// per-pixel loss; it is zero for a match, large for a flat fill and for a grainy one, and blind
// to a block decoder's seams.
#include <ATen/ATen.h>

#include <cmath>

#include <catch2/catch.hpp>

#include "core/diagnostics/error.h"
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
  // Checkered windows: two steps of 0.5 per pixel; the image edge has no pairs and does not count.
  CHECK(detail[0][1].item<double>() == Approx(1.0).margin(1e-6));
  CHECK_THROWS_AS(local_detail(image, 5), Error);
}

TEST_CASE("local detail can leave out a block decoder's seams", "[training][detail]") {
  // A constant per 4x4 block: steps only across the block seams.
  at::Tensor blocks = at::rand({3, 4, 4}).repeat_interleave(4, 1).repeat_interleave(4, 2);
  CHECK(local_detail(blocks, 8).max().item<double>() > 0.01);
  CHECK(local_detail(blocks, 8, /*seam=*/4).max().item<double>() == Approx(0.0).margin(1e-7));
  // Steps inside the blocks still count.
  at::Tensor rows = at::arange(16).view({16, 1}), columns = at::arange(16).view({1, 16});
  at::Tensor checkered = (((rows + columns) % 2) * 0.5).to(at::kFloat).expand({3, 16, 16}).contiguous();
  CHECK(local_detail(checkered, 8, 4).min().item<double>() == Approx(1.0).margin(1e-6));
}

TEST_CASE("detail matching ignores where the grain lies, not how much there is", "[training][detail]") {
  auto generator = at::detail::createCPUGenerator(7);
  const at::Tensor truth = at::rand({3, 32, 32}, generator) * 0.4 - 0.2;
  const at::Tensor weight = at::ones({4, 4});
  CHECK(detail_matching_loss(truth, truth, weight, 8).item<double>() == Approx(0.0).margin(1e-9));
  // A flat fill: every window's detail is the floor, the loss the squared log of the ratio.
  const at::Tensor flat = at::zeros({3, 32, 32});
  const double truth_detail = local_detail(truth, 8).mean().item<double>();
  const double flat_loss = detail_matching_loss(flat, truth, weight, 8).item<double>();
  CHECK(flat_loss == Approx(std::pow(std::log((truth_detail + 0.01) / 0.01), 2)).epsilon(0.02));
  // Another draw of the same noise: per-pixel it is as far from the truth as can be, yet its
  // detail matches closely, so the loss is far below the flat fill's.
  const at::Tensor other_grain = at::rand({3, 32, 32}, generator) * 0.4 - 0.2;
  CHECK(detail_matching_loss(other_grain, truth, weight, 8).item<double>() < flat_loss / 100);
  CHECK((other_grain - truth).pow(2).mean().item<double>() > (flat - truth).pow(2).mean().item<double>());
  // Too much detail costs like too little: four times the grain is as far off as a quarter.
  const double grainier = detail_matching_loss(truth * 4, truth, weight, 8).item<double>();
  const double smoother = detail_matching_loss(truth / 4, truth, weight, 8).item<double>();
  CHECK(grainier > 0.5);
  CHECK(smoother > 0.5);
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
  const at::Tensor stepped = (truth * 0.1 - 0.01 * prediction.grad().sign()).detach();
  CHECK(detail_matching_loss(stepped, truth, weight, 8).item<double>() <
        detail_matching_loss(truth * 0.1, truth, weight, 8).item<double>());
}
