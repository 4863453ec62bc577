// Encoding an image into bytes in memory (HTTP responses, the C API's flashps_image_encode).
// Kept out of core/image/image.h so adding it did not touch every file that reads images.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/image/image.h"

namespace flashps {

// PNG at zlib level png_level (0..9; -1: libpng's default, 6) or JPEG (quality 95, alpha
// dropped). Level 1 is several times faster than 6 for slightly larger files: what a server
// answering within milliseconds wants. Errors name `name`.
std::vector<uint8_t> encode_image(const Image& image, ImageFormat format, int png_level, const std::string& name);

}  // namespace flashps
