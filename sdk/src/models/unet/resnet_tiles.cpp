#include "models/unet/resnet_tiles.h"

#include <ATen/ATen.h>

#include <vector>

#include "core/diagnostics/error.h"

namespace flashps::unet {
namespace {

void check_tiling(int64_t height, int64_t width, int64_t tile) {
  if (tile <= 0 || height % tile || width % tile)
    throw Error("UNet tiles: a " + std::to_string(height) + "x" + std::to_string(width) + " map does not split into " +
                std::to_string(tile) + "-pixel tiles");
}

}  // namespace

int64_t resnet_tile_side(int64_t height, int64_t width) {
  // Small maps take small tiles: a mask covers most 8-pixel tiles of a 32-pixel map.
  const bool large = height >= 64 && width >= 64;
  for (int64_t tile : {8, 4})
    if ((large || tile == 4) && height % tile == 0 && width % tile == 0) return tile;
  return 0;
}

at::Tensor tile_group_moments(const at::Tensor& x, int64_t groups, int64_t tile) {
  const int64_t batch = x.size(0), channels = x.size(1), height = x.size(2), width = x.size(3);
  check_tiling(height, width, tile);
  const int64_t rows = height / tile, cols = width / tile;
  // [B, G, C/G, rows, t, cols, t] -> [B, rows, cols, G, C/G * t * t]
  const at::Tensor grouped = x.to(at::kFloat)
                                 .reshape({batch, groups, channels / groups, rows, tile, cols, tile})
                                 .permute({0, 3, 5, 1, 2, 4, 6})
                                 .reshape({batch, rows * cols, groups, -1});
  return at::cat({grouped.mean(-1), grouped.square().mean(-1)}, -1);
}

std::pair<at::Tensor, at::Tensor> combine_tile_moments(const at::Tensor& moments) {
  const int64_t groups = moments.size(2) / 2;
  const at::Tensor wide = moments.to(at::kDouble);  // E[x^2] - E[x]^2 cancels: keep the digits
  const at::Tensor mean = wide.narrow(2, 0, groups).mean(1);
  const at::Tensor mean_of_squares = wide.narrow(2, groups, groups).mean(1);
  return {mean.to(at::kFloat), (mean_of_squares - mean.square()).clamp_min(0).to(at::kFloat)};
}

at::Tensor gather_tiles(const at::Tensor& x, int64_t tile, const at::Tensor& tile_indices, int64_t halo) {
  const int64_t height = x.size(2), width = x.size(3);
  check_tiling(height, width, tile);
  const int64_t cols = width / tile, side = tile + 2 * halo;
  const at::Tensor padded = halo ? at::constant_pad_nd(x, {halo, halo, halo, halo}) : x;
  const at::Tensor indices = tile_indices.to(at::kCPU, at::kLong).contiguous();
  const int64_t* index = indices.data_ptr<int64_t>();
  std::vector<at::Tensor> tiles;
  for (int64_t i = 0; i < indices.numel(); ++i) {
    if (index[i] < 0 || index[i] >= cols * (height / tile)) throw Error("UNet tiles: tile index out of range");
    const int64_t top = (index[i] / cols) * tile, left = (index[i] % cols) * tile;
    tiles.push_back(padded.narrow(2, top, side).narrow(3, left, side));
  }
  return at::stack(tiles, 1).reshape({x.size(0) * indices.numel(), x.size(1), side, side});
}

void scatter_tiles(at::Tensor& out, const at::Tensor& tiles, int64_t tile, const at::Tensor& tile_indices) {
  const int64_t batch = out.size(0), height = out.size(2), width = out.size(3);
  check_tiling(height, width, tile);
  const int64_t cols = width / tile;
  const at::Tensor indices = tile_indices.to(at::kCPU, at::kLong).contiguous();
  const int64_t count = indices.numel();
  const at::Tensor per_image = tiles.reshape({batch, count, out.size(1), tile, tile});
  for (int64_t i = 0; i < count; ++i) {
    const int64_t k = indices.data_ptr<int64_t>()[i];
    out.narrow(2, (k / cols) * tile, tile).narrow(3, (k % cols) * tile, tile).copy_(per_image.select(1, i));
  }
}

at::Tensor tile_inside_map(int64_t height, int64_t width, int64_t tile, const at::Tensor& tile_indices, int64_t halo) {
  check_tiling(height, width, tile);
  const at::Tensor ones = at::ones({1, 1, height, width});
  return gather_tiles(ones, tile, tile_indices, halo);  // padding is 0 beyond the map
}

}  // namespace flashps::unet
