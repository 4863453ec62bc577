#include "engine/token_mask.h"

#include <ATen/ATen.h>

#include "core/diagnostics/error.h"

namespace flashps::engine {

int64_t TokenMask::masked_count() const { return masked_rows.defined() ? masked_rows.numel() : 0; }

double TokenMask::ratio() const {
  return token_count() ? double(masked_count()) / double(token_count()) : 0.0;
}

TokenMask token_mask_from_grid(const at::Tensor& grid) {
  if (grid.dim() != 2) throw Error("token mask grid must be 2-D");
  TokenMask mask;
  mask.grid_height = grid.size(0);
  mask.grid_width = grid.size(1);
  mask.masked = grid.to(at::kCPU, at::kBool).reshape({-1}).contiguous();
  mask.masked_rows = at::nonzero(mask.masked).reshape({-1});
  mask.unmasked_rows = at::nonzero(mask.masked.logical_not()).reshape({-1});
  return mask;
}

TokenMask unite_token_masks(const TokenMask& a, const TokenMask& b) {
  if (a.grid_height != b.grid_height || a.grid_width != b.grid_width)
    throw Error("token masks of different grids (" + std::to_string(a.grid_width) + "x" + std::to_string(a.grid_height) +
                " and " + std::to_string(b.grid_width) + "x" + std::to_string(b.grid_height) + ") cannot be united");
  return token_mask_from_grid((a.masked | b.masked).view({a.grid_height, a.grid_width}));
}

TokenMask token_mask_from_pixels(const at::Tensor& pixel_mask, int64_t pixels_per_token,
                                 int64_t dilation_tokens, double threshold) {
  if (pixel_mask.dim() != 2) throw Error("pixel mask must be 2-D [H, W]");
  const int64_t height = pixel_mask.size(0), width = pixel_mask.size(1);
  if (height % pixels_per_token || width % pixels_per_token)
    throw Error("mask size " + std::to_string(width) + "x" + std::to_string(height) +
                " is not a multiple of the token size " + std::to_string(pixels_per_token));
  at::Tensor binary = (pixel_mask.to(at::kCPU, at::kFloat) >= threshold).to(at::kFloat);
  // Any masked pixel marks its token: max-pool over each token's pixels.
  at::Tensor grid = at::max_pool2d(binary.unsqueeze(0).unsqueeze(0), {pixels_per_token, pixels_per_token});
  if (dilation_tokens > 0) {
    const int64_t kernel = 2 * dilation_tokens + 1;
    grid = at::max_pool2d(grid, {kernel, kernel}, {1, 1}, {dilation_tokens, dilation_tokens});
  }
  return token_mask_from_grid(grid.squeeze(0).squeeze(0) > 0.5);
}

TokenMask halve_token_mask(const TokenMask& mask) {
  const at::Tensor grid = mask.masked.reshape({1, 1, mask.grid_height, mask.grid_width}).to(at::kFloat);
  const at::Tensor pooled = at::max_pool2d(grid, {2, 2}, {2, 2}, {0, 0}, {1, 1}, /*ceil_mode=*/true);
  return token_mask_from_grid(pooled.squeeze(0).squeeze(0) > 0.5);
}

TokenMask repeat_token_mask(const TokenMask& mask, int64_t copies) {
  if (copies < 1) throw Error("token mask: copies must be at least 1");
  const at::Tensor grid = mask.masked.reshape({mask.grid_height, mask.grid_width});
  return token_mask_from_grid(grid.repeat({copies, 1}));
}

}  // namespace flashps::engine
