// Decoding large latents tile by tile (what diffusers' AutoencoderKL.enable_tiling does), so
// memory stays bounded by one tile whatever the image size. Tiles overlap, and each tile's
// pixels are weighted by linear ramps across the whole overlap with its neighbours, so the small
// differences between tiles (each tile's GroupNorm statistics and mid-block attention see only
// that tile) fade across the overlap instead of showing as seams. Unlike diffusers, the last tile
// of a row or column is aligned to the image edge instead of cut short, so every tile is full size.
#pragma once
#include <ATen/Tensor.h>

#include <functional>
#include <vector>

#include "core/diagnostics/progress.h"

namespace flashps {

struct DecodeTiling {
  int64_t tile = 64;         // latent pixels per tile side (512 image pixels at 8x)
  int64_t overlap = 16;      // latent pixels adjacent tiles share (blended)
  int64_t tile_above = 128;  // tile only latents wider or taller than this (0: always)
};

// First latent index of each tile along an axis of `length`: every tile is `tile` long (or the
// whole axis when shorter), neighbours overlap by at least `overlap`, the last ends at the edge.
std::vector<int64_t> tile_starts(int64_t length, int64_t tile, int64_t overlap);

// decode: latents [B, C, h, w] -> images [B, 3, h*scale, w*scale]. Calls it once per tile (or
// once for the whole latent when no side exceeds tiling.tile_above) and blends. Reports
// progress as stage "decode", step = tiles done; throws Cancelled when asked to stop.
at::Tensor decode_tiled(const std::function<at::Tensor(const at::Tensor&)>& decode, const at::Tensor& latents,
                        int64_t scale, const DecodeTiling& tiling, const ProgressCallback& progress = {});

}  // namespace flashps
