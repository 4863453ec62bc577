// 8-bit images in memory and their PNG / JPEG files.
// Deliberately free of LibTorch so the decoder can be fuzzed (fuzz/fuzz_image.cpp) on its own.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace flashps {

// Row-major, interleaved 8-bit pixels. channels: 1 (gray), 3 (RGB) or 4 (RGBA).
struct Image {
  int width = 0;
  int height = 0;
  int channels = 0;
  std::vector<uint8_t> pixels;

  Image() = default;
  Image(int width, int height, int channels, uint8_t fill = 0);

  bool empty() const { return width <= 0 || height <= 0; }
  size_t pixel_count() const { return static_cast<size_t>(width) * static_cast<size_t>(height); }
  size_t offset(int x, int y) const {
    return (static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)) *
           static_cast<size_t>(channels);
  }
  uint8_t& at(int x, int y, int channel = 0) { return pixels[offset(x, y) + channel]; }
  uint8_t at(int x, int y, int channel = 0) const { return pixels[offset(x, y) + channel]; }
};

// The decoders' budget. An image whose declared size is over it is refused right after its header,
// before any pixel memory is allocated, so a 100-byte file cannot claim gigabytes.
// The side limit is fixed; the pixel and byte budgets default to what an edit can afford on a
// 24 GiB machine (64 MP covers every 35 mm camera) and are changed by the environment:
//   FLASHPS_MAX_IMAGE_PIXELS  width x height, whole number (default 64000000)
//   FLASHPS_MAX_IMAGE_BYTES   decoded pixels plus the decoder's own buffers (a progressive
//                             JPEG's coefficients, libjpeg's memory limit), whole number of bytes
//                             (default 1073741824)
constexpr int kMaxImageSide = 16384;
constexpr int64_t kMaxImagePixels = 64'000'000;
constexpr int64_t kMaxImageBytes = int64_t{1} << 30;

struct ImageBudget {
  int64_t max_pixels = kMaxImagePixels;
  int64_t max_bytes = kMaxImageBytes;
};
// The defaults with the environment's overrides, read at each call. A value that is not a positive
// whole number throws InvalidArgumentError naming the variable.
ImageBudget image_budget();

// Throws InvalidArgumentError("<name>: ...") unless channels is 1/3/4, both sides are positive and pixels has
// exactly width*height*channels bytes. Every function taking an Image calls it.
void check_image(const Image& image, const std::string& name);

// Reads a PNG or JPEG file within image_budget(); the format comes from the magic bytes, not the
// extension. PNG: palette, gray < 8 bit and tRNS are expanded, 16-bit is scaled to 8-bit, gray+alpha
// becomes RGBA. JPEG: gray stays gray, YCbCr and CMYK become RGB. Truncated or corrupt data is an
// error, including a JPEG whose data ends before the size its header declares (libjpeg would
// fill the rest with grey).
Image read_image(const std::string& path);
// The same on bytes in memory; source_name names the data in error messages.
Image decode_image(const uint8_t* bytes, size_t size, const std::string& source_name);
Image decode_image(const uint8_t* bytes, size_t size, const std::string& source_name, const ImageBudget& budget);

// Writes PNG (.png) or JPEG (.jpg/.jpeg, quality 95; alpha is dropped) by extension, atomically:
// the data goes to a temporary file in the same folder that is then renamed over `path`.
// A full disk is reported as such: "<path>: cannot write PNG: the disk is full (...)".
void write_image(const std::string& path, const Image& image);
// What write_image(path, image) drops that the caller should be told: the transparency of an
// RGBA image written as JPEG. Empty when nothing is lost.
std::string image_write_loss(const std::string& path, const Image& image);

enum class ImageFormat { png, jpeg };
// write_image's encoder on an open stream, flushed; errors name `name`.
void write_image_stream(std::FILE* file, const Image& image, ImageFormat format, const std::string& name);

// Gray is replicated, alpha dropped.
Image to_rgb(const Image& image);
// BT.601 luma; alpha dropped.
Image to_gray(const Image& image);

}  // namespace flashps
