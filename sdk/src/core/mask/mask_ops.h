// Pixel-space operations on images and edit masks for the inpainting pipeline (no LibTorch).
// Masks are 1-channel, white (255) = regenerate, black (0) = keep. Functions taking a mask also
// accept 3/4-channel masks and read them through mask_values, the SDK's one rule.
#pragma once
#include <cstdint>

#include "core/image/image.h"

namespace flashps {

struct PixelBox {
  int x = 0, y = 0, w = 0, h = 0;
  bool empty() const { return w <= 0 || h <= 0; }
};

// 1-channel mask strength (coverage), 0..255, the one rule for every mask read from pixels:
//   gray:  the value;
//   RGB:   the brightest channel, max(R, G, B), so a pure red or blue stroke counts fully;
//   RGBA:  max(R, G, B) * alpha / 255 (colour strokes on a transparent layer), except when the
//          strokes live in alpha alone (some pixel is see-through and every visible one is
//          black): then alpha. An opaque all-black RGBA mask is empty.
Image mask_values(const Image& mask);
// 1-channel 0/255: 255 where mask_values >= threshold.
Image binarize_mask(const Image& mask, uint8_t threshold = 128);

// Binarizes, then dilates with a disc of radius `pixels`: a pixel is set when a set pixel lies
// within Euclidean distance `pixels`. Negative `pixels` erodes with the same disc, counting pixels
// outside the image as set so a mask touching the border keeps touching it. Exact, not a
// separable approximation: a vertical distance pass plus per-row span unions, linear time
// whatever the radius.
Image grow_mask(const Image& mask, int pixels);

// Soft edge: three box blurs whose radii sum to `pixels` (≈ a gaussian), so the 0..255 ramp
// reaches `pixels` to either side of the original edge. Borders replicate the edge pixels.
Image feather_mask(const Image& mask, int pixels);

// Sample centres are aligned (pixel x samples source (x + 0.5) * src_w / w - 0.5).
Image resize_nearest(const Image& image, int width, int height);
// Bilinear, switching per axis to area averaging when shrinking more than 2x (bilinear would then
// skip source pixels and alias).
Image resize_bilinear(const Image& image, int width, int height);

// The rectangle must lie inside the image.
Image crop(const Image& image, int x, int y, int w, int h);
// Copies src with its top-left corner at (x, y); the parts outside dst are clipped.
void paste(Image& destination, const Image& source, int x, int y);

// out = original * (1 - a) + generated * a with a = mask_alpha / 255, rounded; a = 0 keeps the
// original pixel exactly, a = 255 takes the generated one. All three must have the same size.
Image composite(const Image& original, const Image& generated, const Image& mask_alpha);

// An edit's result (RGB, the input's size) with the input's transparency: the input's alpha where
// the result keeps the original, opaque where it was regenerated (paste_alpha 255), blended in
// between. An empty paste_alpha keeps the input's alpha everywhere. An input without alpha
// returns `result` as is.
Image restore_alpha(const Image& result, const Image& input, const Image& paste_alpha);

// Fraction of pixels with mask_values >= 128 (0 for an empty image).
double mask_ratio(const Image& mask);
// Smallest box holding every pixel with mask_values >= 128; empty (all zero) when none.
PixelBox mask_bounding_box(const Image& mask);
// Both of mask_ratio and mask_bounding_box from one pass over the mask.
struct MaskCoverage {
  double ratio = 0;
  PixelBox box;
};
MaskCoverage mask_coverage(const Image& mask);

}  // namespace flashps
