// flashps::Image <-> QImage, and the mask overlay drawn over the canvas.
#pragma once
#include <QColor>
#include <QImage>

#include "core/image.h"

namespace flashps_paint {

QImage to_qimage(const flashps::Image& image);        // 1, 3 or 4 channels
flashps::Image from_qimage(const QImage& image);       // RGB, 8 bit
// ARGB premultiplied: `colour` with alpha = mask value * opacity (0..1).
QImage mask_overlay(const flashps::Image& mask, const QColor& colour, double opacity);

}  // namespace flashps_paint
