#include "image_convert.h"

#include <cstring>
#include <stdexcept>

namespace flashps_paint {

QImage to_qimage(const Image& image) {
  if (image.empty()) return {};
  const QImage::Format format = image.channels == 1   ? QImage::Format_Grayscale8
                                : image.channels == 3 ? QImage::Format_RGB888
                                                      : QImage::Format_RGBA8888;
  QImage result(int(image.width), int(image.height), format);
  const size_t row_bytes = size_t(image.width) * image.channels;
  for (uint32_t y = 0; y < image.height; ++y)
    std::memcpy(result.scanLine(int(y)), image.pixels.data() + y * row_bytes, row_bytes);
  return result;
}

Image from_qimage(const QImage& image) {
  const QImage rgb = image.convertToFormat(QImage::Format_RGB888);
  Image result(uint32_t(rgb.width()), uint32_t(rgb.height()), 3);
  const size_t row_bytes = size_t(rgb.width()) * 3;
  for (int y = 0; y < rgb.height(); ++y)
    std::memcpy(result.pixels.data() + y * row_bytes, rgb.constScanLine(y), row_bytes);
  return result;
}

Image to_rgb(const Image& image) {
  if (image.channels == 3) return image;
  if (image.channels != 1 && image.channels != 4)
    throw std::invalid_argument("to_rgb: an image with " + std::to_string(image.channels) + " channels");
  Image rgb(image.width, image.height, 3);
  const size_t count = size_t(image.width) * image.height;
  for (size_t i = 0; i < count; ++i) {
    const uint8_t* in = &image.pixels[i * image.channels];
    for (int c = 0; c < 3; ++c) rgb.pixels[i * 3 + c] = image.channels == 1 ? in[0] : in[c];
  }
  return rgb;
}

Image crop(const Image& image, const flashps::sdk::Rect& box) {
  Image block(uint32_t(box.width), uint32_t(box.height), image.channels);
  const size_t row_bytes = size_t(box.width) * image.channels;
  for (int y = 0; y < box.height; ++y)
    std::memcpy(block.pixels.data() + y * row_bytes,
                image.pixels.data() + (size_t(box.y + y) * image.width + box.x) * image.channels, row_bytes);
  return block;
}

void paste(Image& image, const Image& block, int x, int y) {
  const size_t row_bytes = size_t(block.width) * block.channels;
  for (uint32_t row = 0; row < block.height; ++row)
    std::memcpy(image.pixels.data() + ((y + row) * size_t(image.width) + x) * image.channels,
                block.pixels.data() + row * row_bytes, row_bytes);
}

QImage mask_overlay(const Image& mask, const QColor& colour, double opacity) {
  if (mask.empty()) return {};
  QImage overlay(int(mask.width), int(mask.height), QImage::Format_ARGB32_Premultiplied);
  for (int y = 0; y < int(mask.height); ++y) {
    auto* row = reinterpret_cast<QRgb*>(overlay.scanLine(y));
    for (int x = 0; x < int(mask.width); ++x) {
      const int alpha = int(mask_at(mask, x, y) * opacity + 0.5);
      row[x] = qRgba(colour.red() * alpha / 255, colour.green() * alpha / 255, colour.blue() * alpha / 255, alpha);
    }
  }
  return overlay;
}

}  // namespace flashps_paint
