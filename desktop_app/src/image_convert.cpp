#include "image_convert.h"

#include <cstring>

namespace flashps_paint {

QImage to_qimage(const flashps::Image& image) {
  if (image.empty()) return {};
  const QImage::Format format = image.channels == 1   ? QImage::Format_Grayscale8
                                : image.channels == 3 ? QImage::Format_RGB888
                                                      : QImage::Format_RGBA8888;
  QImage result(image.width, image.height, format);
  const size_t row_bytes = size_t(image.width) * image.channels;
  for (int y = 0; y < image.height; ++y)
    std::memcpy(result.scanLine(y), image.pixels.data() + y * row_bytes, row_bytes);
  return result;
}

flashps::Image from_qimage(const QImage& image) {
  const QImage rgb = image.convertToFormat(QImage::Format_RGB888);
  flashps::Image result(rgb.width(), rgb.height(), 3);
  const size_t row_bytes = size_t(rgb.width()) * 3;
  for (int y = 0; y < rgb.height(); ++y)
    std::memcpy(result.pixels.data() + y * row_bytes, rgb.constScanLine(y), row_bytes);
  return result;
}

QImage mask_overlay(const flashps::Image& mask, const QColor& colour, double opacity) {
  if (mask.empty()) return {};
  QImage overlay(mask.width, mask.height, QImage::Format_ARGB32_Premultiplied);
  for (int y = 0; y < mask.height; ++y) {
    auto* row = reinterpret_cast<QRgb*>(overlay.scanLine(y));
    for (int x = 0; x < mask.width; ++x) {
      const int alpha = int(mask.at(x, y) * opacity + 0.5);
      row[x] = qRgba(colour.red() * alpha / 255, colour.green() * alpha / 255, colour.blue() * alpha / 255, alpha);
    }
  }
  return overlay;
}

}  // namespace flashps_paint
