#include "models/vae/tiled_decode.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>

#include "core/diagnostics/error.h"

namespace flashps {
namespace {

// Blend weight of each image pixel along one axis of a tile: a ramp up across the overlap with
// the previous tile, a ramp down across the overlap with the next, 1 in between. Ramps are
// sampled at pixel centres, so they are never 0 and two overlapping ramps sum to 1.
at::Tensor axis_weights(const std::vector<int64_t>& starts, size_t index, int64_t tile, int64_t scale) {
  const int64_t pixels = tile * scale;
  std::vector<float> weights(static_cast<size_t>(pixels), 1.0f);
  if (index > 0) {
    const int64_t overlap = (starts[index - 1] + tile - starts[index]) * scale;
    for (int64_t u = 0; u < overlap && u < pixels; ++u)
      weights[u] = std::min(weights[u], (static_cast<float>(u) + 0.5f) / static_cast<float>(overlap));
  }
  if (index + 1 < starts.size()) {
    const int64_t overlap = (starts[index] + tile - starts[index + 1]) * scale;
    for (int64_t u = pixels - overlap; u < pixels; ++u)
      if (u >= 0) weights[u] = std::min(weights[u], (static_cast<float>(pixels - u) - 0.5f) / static_cast<float>(overlap));
  }
  return at::tensor(weights);
}

}  // namespace

std::vector<int64_t> tile_starts(int64_t length, int64_t tile, int64_t overlap) {
  if (length <= tile) return {0};
  const int64_t stride = tile - overlap;
  std::vector<int64_t> starts;
  for (int64_t start = 0; start + tile < length; start += stride) starts.push_back(start);
  starts.push_back(length - tile);  // the last tile ends at the edge, full size
  return starts;
}

at::Tensor decode_tiled(const std::function<at::Tensor(const at::Tensor&)>& decode, const at::Tensor& latents,
                        int64_t scale, const DecodeTiling& tiling, const ProgressCallback& progress) {
  if (latents.dim() != 4) throw Error("tiled decode: latents must be [batch, channels, height, width]");
  if (tiling.tile < 2 || tiling.overlap < 0 || tiling.overlap >= tiling.tile)
    throw Error("tiled decode: the tile (" + std::to_string(tiling.tile) + " latent pixels) must exceed the overlap (" +
                std::to_string(tiling.overlap) + ") and be at least 2");
  const int64_t height = latents.size(2), width = latents.size(3);
  if (std::max(height, width) <= tiling.tile_above) return decode(latents);
  const int64_t tile_h = std::min(tiling.tile, height), tile_w = std::min(tiling.tile, width);
  const std::vector<int64_t> rows = tile_starts(height, tile_h, tiling.overlap);
  const std::vector<int64_t> cols = tile_starts(width, tile_w, tiling.overlap);
  const int total = static_cast<int>(rows.size() * cols.size());
  const auto start_time = std::chrono::steady_clock::now();
  auto report = [&](int done) {
    report_progress(progress, {"decode", done, total,
                               std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count()});
  };
  report(0);
  at::Tensor sum, weight_sum;
  int done = 0;
  for (size_t r = 0; r < rows.size(); ++r) {
    const at::Tensor row_weights = axis_weights(rows, r, tile_h, scale);
    for (size_t c = 0; c < cols.size(); ++c) {
      at::Tensor image = decode(latents.narrow(2, rows[r], tile_h).narrow(3, cols[c], tile_w)).to(at::kFloat);
      if (image.size(2) != tile_h * scale || image.size(3) != tile_w * scale)
        throw Error("tiled decode: a tile decoded to " + std::to_string(image.size(2)) + "x" +
                    std::to_string(image.size(3)) + " pixels, expected " + std::to_string(tile_h * scale) + "x" +
                    std::to_string(tile_w * scale));
      if (!sum.defined()) {
        sum = at::zeros({image.size(0), image.size(1), height * scale, width * scale}, image.options());
        weight_sum = at::zeros({height * scale, width * scale}, image.options());
      }
      const at::Tensor weights =
          at::outer(row_weights.to(image.device()), axis_weights(cols, c, tile_w, scale).to(image.device()));
      sum.narrow(2, rows[r] * scale, tile_h * scale).narrow(3, cols[c] * scale, tile_w * scale).add_(image * weights);
      weight_sum.narrow(0, rows[r] * scale, tile_h * scale).narrow(1, cols[c] * scale, tile_w * scale).add_(weights);
      report(++done);
    }
  }
  return sum.div_(weight_sum);
}

}  // namespace flashps
