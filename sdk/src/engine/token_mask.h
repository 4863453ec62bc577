// Pixel mask -> token mask. A token is masked (recomputed) if any of its pixels is masked; an
// optional dilation by k tokens adds a ring of context around the edit.
#pragma once
#include <ATen/Tensor.h>

namespace flashps::engine {

struct TokenMask {
  int64_t grid_height = 0, grid_width = 0;
  at::Tensor masked;         // bool [grid_height * grid_width], row-major token order
  at::Tensor masked_rows;    // int64 indices of masked tokens (sorted)
  at::Tensor unmasked_rows;  // int64 indices of unmasked tokens (sorted)

  int64_t token_count() const { return grid_height * grid_width; }
  int64_t masked_count() const;
  double ratio() const;  // masked / all
  bool empty() const { return masked_count() == 0; }
  bool full() const { return masked_count() == token_count(); }
};

// pixel_mask: [H, W] (any dtype; values >= 0.5 of the max scale mean "edit": pass floats in
// [0, 1] or bytes 0/255 with `threshold`). pixels_per_token: e.g. 16 for Flux (8x VAE x 2x2
// patches). H and W must be multiples of pixels_per_token.
TokenMask token_mask_from_pixels(const at::Tensor& pixel_mask, int64_t pixels_per_token,
                                 int64_t dilation_tokens = 0, double threshold = 0.5);

// From a bool grid [h, w] of tokens.
TokenMask token_mask_from_grid(const at::Tensor& grid);

// Tokens masked in either (same grid; Error otherwise).
TokenMask unite_token_masks(const TokenMask& a, const TokenMask& b);

// The mask at half the resolution (a stride-2 downsampling, odd sides rounding up): a token is
// masked if any of the up to 2x2 tokens it covers is (max-pooling). A UNet's deeper levels.
TokenMask halve_token_mask(const TokenMask& mask);

// `copies` images carrying the same mask, their tokens one after another (a request's
// classifier-free-guidance rows): row c * tokens + i is masked iff token i is.
TokenMask repeat_token_mask(const TokenMask& mask, int64_t copies);

}  // namespace flashps::engine
