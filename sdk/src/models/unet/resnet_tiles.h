// Tiles of a UNet level's feature map, the unit of tile-sparse ResNets (mask-aware UNet editing,
// issue 26): a ResNet can compute its output on the tiles a mask touches only, from the whole
// input map with a 2-pixel halo, provided its second GroupNorm normalises with statistics of the
// whole map. Those statistics are assembled from per-tile moments: this edit's for the tiles it
// computes, the template's (captured) for the others.
#pragma once
#include <ATen/Tensor.h>

#include <utility>

namespace flashps::unet {

// The tile side a level's grid is cut into: 8 for maps of 64 pixels a side or more, else 4,
// when it divides both sides; 0 otherwise (that ResNet then runs dense).
int64_t resnet_tile_side(int64_t height, int64_t width);

// Per-tile, per-group moments of x [B, C, H, W] over tiles of side `tile` (row-major over the
// tile grid): [B, tiles, 2 * groups], each group's mean then its mean of squares (float32).
at::Tensor tile_group_moments(const at::Tensor& x, int64_t groups, int64_t tile);

// Whole-map statistics from the moments of every (equal-size) tile, [B, tiles, 2 * groups]:
// {mean [B, groups], biased variance [B, groups]}, as GroupNorm computes them.
std::pair<at::Tensor, at::Tensor> combine_tile_moments(const at::Tensor& moments);

// Tiles of x [B, C, H, W] with `halo` pixels around each (zeros beyond the map), in the order of
// `tile_indices` (int64, the same for every image): [B * n, C, tile + 2 halo, tile + 2 halo],
// image-major.
at::Tensor gather_tiles(const at::Tensor& x, int64_t tile, const at::Tensor& tile_indices, int64_t halo);

// Writes tile cores [B * n, C, tile, tile] (image-major, as gather_tiles returns them) into
// out [B, C, H, W].
void scatter_tiles(at::Tensor& out, const at::Tensor& tiles, int64_t tile, const at::Tensor& tile_indices);

// 1 where a tile's pixel with its `halo` ring lies inside the H x W map, else 0:
// [n, 1, tile + 2 halo, tile + 2 halo] (a convolution's zero padding, for tiles at the border).
at::Tensor tile_inside_map(int64_t height, int64_t width, int64_t tile, const at::Tensor& tile_indices, int64_t halo);

}  // namespace flashps::unet
