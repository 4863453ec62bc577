// flashps::sdk::Image <-> QImage, the few pixel operations the app needs that the SDK has no
// public function for (channel conversion, crop/paste of undo boxes, resizing a loaded mask),
// and the mask overlay drawn over the canvas.
#pragma once
#include <QColor>
#include <QImage>
#include <cstdint>

#include <flashps/flashps.hpp>

namespace flashps_paint {

using Image = flashps::sdk::Image;

QImage to_qimage(const Image& image);   // 1, 3 or 4 channels
Image from_qimage(const QImage& image);  // RGB, 8 bit
// 3 channels: grey repeated, alpha dropped (the document edits RGB).
Image to_rgb(const Image& image);

// The pixels of `box` (inside `image`), and writing such a block back at its place.
Image crop(const Image& image, const flashps::sdk::Rect& box);
void paste(Image& image, const Image& block, int x, int y);

inline uint8_t mask_at(const Image& mask, int x, int y) { return mask.pixels[size_t(y) * mask.width + x]; }

// ARGB premultiplied: `colour` with alpha = mask value * opacity (0..1).
QImage mask_overlay(const Image& mask, const QColor& colour, double opacity);

}  // namespace flashps_paint
