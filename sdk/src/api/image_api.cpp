// flashps/common.h: 8-bit images — load, decode, save, create, free. Pixels the library returns
// are malloc'ed, so flashps_image_free() can release them from any front end.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "api/api_support.h"
#include "core/diagnostics/error.h"
#include "core/image/image.h"
#include "core/image/image_encode.h"
#include "flashps/flashps.h"

namespace {

using flashps::api::guarded;
using flashps::api::invalid;

constexpr uint32_t kMaxSide = static_cast<uint32_t>(flashps::kMaxImageSide);

}  // namespace

extern "C" {

flashps_status flashps_image_load(const char* path, flashps_image* image) {
  if (!path) return invalid("flashps_image_load", "path is NULL");
  if (!image) return invalid("flashps_image_load", "image (the output) is NULL");
  return guarded([&] { flashps::api::to_c_image(flashps::read_image(path), image); });
}

flashps_status flashps_image_decode(const void* bytes, size_t size, const char* name, flashps_image* image) {
  if (!bytes && size > 0) return invalid("flashps_image_decode", "bytes is NULL but size is " + std::to_string(size));
  if (!image) return invalid("flashps_image_decode", "image (the output) is NULL");
  const std::string source = name ? name : "image data";
  return guarded([&] {
    flashps::api::to_c_image(flashps::decode_image(static_cast<const uint8_t*>(bytes), size, source), image);
  });
}

flashps_status flashps_image_decode_bounded(const void* bytes, size_t size, const char* name, int64_t max_pixels,
                                           flashps_image* image) {
  const char* const function = "flashps_image_decode_bounded";
  if (!bytes && size > 0) return invalid(function, "bytes is NULL but size is " + std::to_string(size));
  if (!image) return invalid(function, "image (the output) is NULL");
  if (max_pixels <= 0) return invalid(function, "max_pixels is " + std::to_string(max_pixels) + "; it must be > 0");
  const std::string source = name ? name : "image data";
  return guarded([&] {
    flashps::ImageBudget budget = flashps::image_budget();
    budget.max_pixels = std::min(budget.max_pixels, max_pixels);
    flashps::api::to_c_image(flashps::decode_image(static_cast<const uint8_t*>(bytes), size, source, budget), image);
  });
}

flashps_status flashps_image_encode(const flashps_image* image, const char* format, void** bytes, size_t* size) {
  const char* const function = "flashps_image_encode";
  if (!image) return invalid(function, "image is NULL");
  if (!bytes || !size) return invalid(function, "bytes or size (the outputs) is NULL");
  const std::string name = format ? format : "";
  if (name != "png" && name != "jpeg")
    return invalid(function, "format '" + name + "' is not \"png\" or \"jpeg\"");
  *bytes = nullptr;
  *size = 0;
  return guarded([&] {
    const std::vector<uint8_t> encoded =
        flashps::encode_image(flashps::api::to_image(*image, "image"),
                              name == "png" ? flashps::ImageFormat::png : flashps::ImageFormat::jpeg, 1,
                              "encoded " + name);
    void* buffer = std::malloc(encoded.empty() ? 1 : encoded.size());
    if (!buffer) throw std::bad_alloc();
    std::memcpy(buffer, encoded.data(), encoded.size());
    *bytes = buffer;
    *size = encoded.size();
  });
}

void flashps_buffer_free(void* bytes) { std::free(bytes); }

flashps_status flashps_image_save(const char* path, const flashps_image* image) {
  if (!path) return invalid("flashps_image_save", "path is NULL");
  if (!image) return invalid("flashps_image_save", "image is NULL");
  return guarded([&] { flashps::write_image(path, flashps::api::to_image(*image, path)); });
}

flashps_status flashps_image_create(uint32_t width, uint32_t height, uint32_t channels, flashps_image* image) {
  const char* const function = "flashps_image_create";
  if (!image) return invalid(function, "image (the output) is NULL");
  if (channels != 1 && channels != 3 && channels != 4)
    return invalid(function, "channels is " + std::to_string(channels) + "; it must be 1, 3 or 4");
  if (width == 0 || height == 0 || width > kMaxSide || height > kMaxSide ||
      uint64_t{width} * height > static_cast<uint64_t>(flashps::kMaxImagePixels))
    return invalid(function, "size " + std::to_string(width) + "x" + std::to_string(height) + " is outside 1.." +
                                 std::to_string(kMaxSide) + " per side (at most " +
                                 std::to_string(flashps::kMaxImagePixels) + " pixels)");
  return guarded([&] {
    const size_t bytes = size_t{width} * height * channels;
    auto* pixels = static_cast<uint8_t*>(std::calloc(bytes, 1));
    if (!pixels) throw std::bad_alloc();
    *image = flashps_image{width, height, channels, pixels};
  });
}

void flashps_image_free(flashps_image* image) {
  if (!image) return;
  std::free(image->pixels);
  *image = flashps_image{};
}

}  // extern "C"
