// Tiled VAE decoding: tiles cover the latent, blending weights sum to one (a per-pixel decoder
// gives the whole-image result), and per-tile differences fade across overlaps instead of
// jumping at a seam.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>

#include "core/diagnostics/error.h"
#include "models/vae/tiled_decode.h"

using namespace flashps;

namespace {

// Nearest-neighbour upsampling of the first 3 channels: every output pixel depends on one latent
// pixel only, so tiling cannot change it.
at::Tensor pixelwise_decode(const at::Tensor& latents, int64_t scale) {
  return latents.narrow(1, 0, 3).repeat_interleave(scale, 2).repeat_interleave(scale, 3) * 2.0 - 0.5;
}

double max_adjacent_jump(const at::Tensor& image) {
  const double across_rows = (image.narrow(2, 1, image.size(2) - 1) - image.narrow(2, 0, image.size(2) - 1)).abs().max().item<double>();
  const double across_cols = (image.narrow(3, 1, image.size(3) - 1) - image.narrow(3, 0, image.size(3) - 1)).abs().max().item<double>();
  return std::max(across_rows, across_cols);
}

}  // namespace

TEST_CASE("tile starts cover the axis with full-size tiles that overlap enough", "[vae][tiling]") {
  CHECK(tile_starts(64, 64, 16) == std::vector<int64_t>{0});
  CHECK(tile_starts(30, 64, 16) == std::vector<int64_t>{0});
  CHECK(tile_starts(100, 64, 16) == std::vector<int64_t>{0, 36});
  for (int64_t length : {65, 97, 128, 200, 333})
    for (int64_t overlap : {0, 8, 16, 40}) {
      const std::vector<int64_t> starts = tile_starts(length, 64, overlap);
      INFO("length " << length << ", overlap " << overlap);
      CHECK(starts.front() == 0);
      CHECK(starts.back() + 64 == length);
      for (size_t i = 1; i < starts.size(); ++i) {
        CHECK(starts[i] > starts[i - 1]);
        CHECK(starts[i - 1] + 64 - starts[i] >= overlap);
      }
    }
}

TEST_CASE("a per-pixel decoder gives the same image tiled as whole", "[vae][tiling]") {
  auto generator = at::detail::createCPUGenerator(5);
  for (auto size : std::vector<std::pair<int64_t, int64_t>>{{40, 36}, {17, 50}, {64, 64}}) {
    at::Tensor latents = at::randn({2, 4, size.first, size.second}, generator);
    auto decode = [](const at::Tensor& x) { return pixelwise_decode(x, 4); };
    const at::Tensor whole = decode(latents);
    const at::Tensor tiled = decode_tiled(decode, latents, 4, {12, 5, 0});
    INFO(size.first << "x" << size.second);
    REQUIRE(tiled.sizes() == whole.sizes());
    CHECK((tiled - whole).abs().max().item<double>() < 1e-5);
  }
}

TEST_CASE("per-tile differences fade across the overlap instead of making a seam", "[vae][tiling]") {
  // Each tile decodes to a constant, its own latent mean (as a tile's GroupNorm statistics would
  // shift it); latents ramp across the image, so neighbouring tiles' constants differ.
  const int64_t scale = 4, overlap = 6;
  at::Tensor ramp = at::linspace(0, 10, 48).view({1, 1, 1, 48}).expand({1, 4, 40, 48}).contiguous();
  std::vector<double> tile_means;
  auto decode = [&](const at::Tensor& x) {
    tile_means.push_back(x.mean().item<double>());
    return at::full({1, 3, x.size(2) * scale, x.size(3) * scale}, tile_means.back());
  };
  const at::Tensor tiled = decode_tiled(decode, ramp, scale, {16, overlap, 0});
  REQUIRE(tile_means.size() > 2);
  const auto [low, high] = std::minmax_element(tile_means.begin(), tile_means.end());
  double largest_step = 0;  // between horizontally neighbouring tiles, the seam a hard cut would show
  for (size_t i = 1; i < tile_means.size(); ++i) largest_step = std::max(largest_step, std::abs(tile_means[i] - tile_means[i - 1]));
  // A convex blend of the tiles, changing by at most the step spread over the overlap's pixels.
  CHECK(tiled.min().item<double>() >= *low - 1e-5);
  CHECK(tiled.max().item<double>() <= *high + 1e-5);
  CHECK(max_adjacent_jump(tiled) <= largest_step / double(overlap * scale) * 1.01 + 1e-6);
  CHECK(max_adjacent_jump(tiled) > 0);  // the tiles did differ
}

TEST_CASE("tiled decode reports progress, can be cancelled and refuses bad tilings", "[vae][tiling]") {
  at::Tensor latents = at::zeros({1, 4, 30, 30});
  auto decode = [](const at::Tensor& x) { return pixelwise_decode(x, 2); };
  std::vector<int> steps;
  int total = 0;
  decode_tiled(decode, latents, 2, {12, 4, 0}, [&](const ProgressEvent& event) {
    CHECK(event.stage == "decode");
    steps.push_back(event.step);
    total = event.total_steps;
    return true;
  });
  CHECK(total == 16);  // tile starts 0, 8, 16, 18 on both axes
  CHECK(steps.front() == 0);
  CHECK(steps.back() == total);
  CHECK_THROWS_AS(decode_tiled(decode, latents, 2, {12, 4, 0}, [](const ProgressEvent& event) { return event.step < 2; }),
                  Cancelled);
  CHECK_THROWS_WITH(decode_tiled(decode, latents, 2, {8, 8, 0}), Catch::Contains("must exceed the overlap"));
  // Below the threshold the decoder sees the whole latent once.
  int calls = 0;
  decode_tiled([&](const at::Tensor& x) { ++calls; return pixelwise_decode(x, 2); }, latents, 2, {12, 4, 30});
  CHECK(calls == 1);
}
