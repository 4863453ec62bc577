// libFuzzer target for the PNG / JPEG decoder: any input must decode or throw flashps::Error,
// never crash, hang, leak, exit or exceed the default image budget (run-fuzzers.sh's RSS limit
// makes a decompression bomb a finding). Seeds: fuzz/corpus/image/, crafted bombs included (IHDR
// claiming 2147483647x1, SOF claiming 16000x6000, SOF claiming more than its data).
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "core/diagnostics/error.h"
#include "core/image/image.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const flashps::Image image = flashps::decode_image(data, size, "fuzz-input");
    // A decoded image must be well formed and within the documented limits.
    flashps::check_image(image, "decoded");
    if (image.width > flashps::kMaxImageSide || image.height > flashps::kMaxImageSide ||
        static_cast<int64_t>(image.pixel_count()) > flashps::kMaxImagePixels ||
        static_cast<int64_t>(image.pixels.size()) > flashps::kMaxImageBytes) {
      std::abort();
    }
    // Exercise the conversions on whatever layout came out.
    if (flashps::to_rgb(image).pixels.size() != image.pixel_count() * 3) std::abort();
    if (flashps::to_gray(image).pixels.size() != image.pixel_count()) std::abort();
  } catch (const flashps::Error&) {
    // Expected for malformed input.
  }
  return 0;
}
