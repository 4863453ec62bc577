// Tile-sparse ResNets, the building block of mask-aware UNet ResNets: tiles with halos, per-tile
// GroupNorm moments that add up to the whole map's statistics, and a ResNet computed on tiles
// that equals the dense ResNet there (borders and corners included).
#include <ATen/ATen.h>

#include <catch2/catch.hpp>

#include "core/diagnostics/error.h"
#include "models/random/random_weights.h"
#include "models/unet/resnet_tiles.h"
#include "models/unet/unet_blocks.h"

using namespace flashps;
using namespace flashps::unet;

namespace {
double max_difference(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(at::kDouble) - b.to(at::kDouble)).abs().max().item<double>();
}
}  // namespace

TEST_CASE("ResNet tile sides divide the level's grid", "[unet][tiles]") {
  CHECK(resnet_tile_side(64, 64) == 8);
  CHECK(resnet_tile_side(64, 128) == 8);
  CHECK(resnet_tile_side(32, 32) == 4);  // smaller maps, smaller tiles
  CHECK(resnet_tile_side(24, 16) == 4);
  CHECK(resnet_tile_side(12, 12) == 4);
  CHECK(resnet_tile_side(12, 8) == 4);
  CHECK(resnet_tile_side(6, 6) == 0);
  CHECK(resnet_tile_side(3, 3) == 0);
}

TEST_CASE("per-tile moments add up to the whole map's GroupNorm statistics", "[unet][tiles]") {
  auto generator = at::detail::createCPUGenerator(8);
  const at::Tensor x = at::randn({2, 16, 16, 24}, generator) * 3 + 1.5;
  const at::Tensor moments = tile_group_moments(x, 4, 8);
  REQUIRE(moments.sizes() == at::IntArrayRef({2, 6, 8}));
  const auto [mean, variance] = combine_tile_moments(moments);
  const at::Tensor grouped = x.reshape({2, 4, -1});
  CHECK(max_difference(mean, grouped.mean(-1)) < 1e-5);
  CHECK(max_difference(variance, grouped.var(-1, /*unbiased=*/false)) < 1e-4);
  CHECK_THROWS_WITH(tile_group_moments(x, 4, 5), Catch::Contains("does not split"));
}

TEST_CASE("tiles gather with zero halos and scatter back", "[unet][tiles]") {
  const at::Tensor x = at::arange(2 * 3 * 8 * 12, at::kFloat).reshape({2, 3, 8, 12});
  const at::Tensor indices = at::tensor({5, 0}, at::kLong);  // the last tile, then the first (4-pixel tiles: 2 x 3)
  const at::Tensor tiles = gather_tiles(x, 4, indices, 1);
  REQUIRE(tiles.sizes() == at::IntArrayRef({4, 3, 6, 6}));
  // Image 1, tile 5 (rows 4..7, columns 8..11): its core, and zeros beyond the map's corner.
  CHECK(at::equal(tiles[2].narrow(1, 1, 4).narrow(2, 1, 4), x[1].narrow(1, 4, 4).narrow(2, 8, 4)));
  CHECK(tiles[2].select(1, 5).abs().sum().item<double>() == 0);
  CHECK(at::equal(tiles[1].narrow(1, 1, 4).narrow(2, 1, 4), x[0].narrow(1, 0, 4).narrow(2, 0, 4)));
  at::Tensor out = at::zeros_like(x);
  scatter_tiles(out, gather_tiles(x, 4, indices, 0), 4, indices);
  CHECK(at::equal(out[1].narrow(1, 4, 4).narrow(2, 8, 4), x[1].narrow(1, 4, 4).narrow(2, 8, 4)));
  CHECK(out[0].narrow(1, 0, 4).narrow(2, 4, 4).abs().sum().item<double>() == 0);  // tile 1 not written
  const at::Tensor inside = tile_inside_map(8, 12, 4, indices, 1);
  CHECK(inside[0].sum().item<double>() == 25);  // the corner tile: 5 x 5 of its 6 x 6 inside
  CHECK(inside[1].sum().item<double>() == 25);
  CHECK_THROWS(gather_tiles(x, 4, at::tensor({6}, at::kLong), 0));
}

TEST_CASE("a ResNet on tiles equals the dense ResNet there, given the map's norm2 statistics", "[unet][tiles]") {
  const int64_t in_channels = GENERATE(16, 24);  // same width, and a 1x1 shortcut
  INFO("in channels " << in_channels);
  TimeResnetBlock resnet(in_channels, 16, 32, 4, 1e-5);
  fill_random_weights(resnet, 12);
  auto generator = at::detail::createCPUGenerator(13);
  const at::Tensor x = at::randn({2, in_channels, 16, 24}, generator);
  const at::Tensor temb = at::randn({2, 32}, generator);  // the two images differ in time embedding
  const at::Tensor dense = resnet.forward(x, temb);
  const auto [mean, variance] = combine_tile_moments(tile_group_moments(resnet.pre_norm2(x, temb), 4, 8));
  // Corners, an edge tile and an inner one, in any order.
  const at::Tensor indices = at::tensor({5, 0, 1, 2}, at::kLong);
  const at::Tensor tiled = resnet.forward_tiles(x, temb, 8, indices, mean, variance);
  REQUIRE(tiled.sizes() == at::IntArrayRef({8, 16, 8, 8}));
  CHECK(max_difference(tiled, gather_tiles(dense, 8, indices, 0)) < 1e-4);
  // Statistics matter: the tiles' own would be wrong (the check above can fail).
  const auto [tile_mean, tile_variance] =
      combine_tile_moments(tile_group_moments(resnet.pre_norm2(x, temb), 4, 8).narrow(1, 0, 1));
  CHECK(max_difference(resnet.forward_tiles(x, temb, 8, indices, tile_mean, tile_variance),
                       gather_tiles(dense, 8, indices, 0)) > 1e-3);
}
