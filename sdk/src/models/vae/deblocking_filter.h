// An adaptive deblocking filter for decoders whose output is assembled from independent blocks,
// after the in-loop filters of H.264/HEVC decoders. Where a block border shows a small step
// between two locally flat sides (a transition no real edge would make: a real edge is a large
// step, texture is not flat), the step is spread into a linear ramp over the half-blocks on
// both sides; everywhere else the image is left as it is.
//
// The bundled model's patch autoencoder decodes each 8x8-pixel transformer token on its own, so
// neighbouring tokens whose predictions disagree meet in a visible step; this filter turns them
// into gradients and leaves photos' real edges and texture alone (measured in
// tests/models/test_deblocking_filter.cpp and samples/models/flashps-fill-small/MODEL_CARD.md).
#pragma once
#include <ATen/Tensor.h>

namespace flashps {

struct DeblockingFilter {
  int64_t block = 0;                // block side in pixels (even, >= 4); 0 = off
  double edge_threshold = 0.3;      // steps at least this large are edges and are kept ([-1, 1] units)
  double flatness_threshold = 0.05; // each side's first-pixel difference must be below this

  bool enabled() const { return block > 0; }
};

// image [B, C, H, W]; borders at multiples of `block` along both axes (columns, then rows).
at::Tensor apply_deblocking_filter(const at::Tensor& image, const DeblockingFilter& filter);

}  // namespace flashps
