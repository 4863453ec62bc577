#include "bench/classical_inpaint.h"

#include <array>

#include "core/diagnostics/error.h"
#include "pipeline/image_tensors.h"
#include "classical/pyramid_fill.h"

#ifdef FLASHPS_HAVE_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/photo.hpp>
#endif

namespace flashps::bench {
namespace {

void check_pair(const Image& image, const Image& mask) {
  if (image.channels != 3) throw Error("classical inpainting: expected an RGB image");
  if (mask.channels != 1 || mask.width != image.width || mask.height != image.height)
    throw Error("classical inpainting: expected a gray mask of the image's size");
}

}  // namespace

Image mean_colour_fill(const Image& image, const Image& mask) {
  check_pair(image, mask);
  std::array<double, 3> sum{};
  int64_t kept = 0;
  const int64_t pixels = int64_t(image.width) * image.height;
  for (int64_t i = 0; i < pixels; ++i)
    if (mask.pixels[i] < 128) {
      for (int c = 0; c < 3; ++c) sum[c] += image.pixels[i * 3 + c];
      ++kept;
    }
  Image out = image;
  for (int64_t i = 0; i < pixels; ++i)
    if (mask.pixels[i] >= 128)
      for (int c = 0; c < 3; ++c) out.pixels[i * 3 + c] = kept ? static_cast<uint8_t>(sum[c] / kept + 0.5) : 128;
  return out;
}

Image pyramid_inpaint(const Image& image, const Image& mask) {
  check_pair(image, mask);
  return tensor_to_image(pyramid_fill(image_to_tensor(image), mask_to_tensor(mask)));
}

bool telea_available() {
#ifdef FLASHPS_HAVE_OPENCV
  return true;
#else
  return false;
#endif
}

Image telea_inpaint(const Image& image, const Image& mask, double radius) {
  check_pair(image, mask);
#ifdef FLASHPS_HAVE_OPENCV
  cv::Mat source(image.height, image.width, CV_8UC3, const_cast<uint8_t*>(image.pixels.data()));
  cv::Mat region(mask.height, mask.width, CV_8UC1, const_cast<uint8_t*>(mask.pixels.data()));
  cv::Mat binary = region >= 128;
  cv::Mat result;
  cv::inpaint(source, binary, result, radius, cv::INPAINT_TELEA);
  Image out(image.width, image.height, 3);
  std::copy(result.data, result.data + out.pixels.size(), out.pixels.begin());
  return out;
#else
  (void)radius;
  throw Error("Telea inpainting needs OpenCV (libopencv-photo-dev); this build has none");
#endif
}

}  // namespace flashps::bench
