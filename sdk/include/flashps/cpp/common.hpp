// FlashPS C++ wrapper, part of <flashps/flashps.hpp> (include that).
// Errors, runtime options (threads, allocator, log callback), progress callbacks and images.
#ifndef FLASHPS_CPP_COMMON_HPP
#define FLASHPS_CPP_COMMON_HPP

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "flashps/flashps.h"

namespace flashps::sdk {

class Error : public std::runtime_error {
 public:
  Error(flashps_status status, const std::string& message) : std::runtime_error(message), status_(status) {}
  flashps_status status() const { return status_; }
  const char* status_name() const { return flashps_status_name(status_); }

 private:
  flashps_status status_;
};

inline void check(flashps_status status) {
  if (status != FLASHPS_OK) throw Error(status, flashps_last_error());
}

namespace detail {
inline std::vector<std::string> split_lines(const char* text) {
  std::vector<std::string> lines;
  if (!text) return lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}
inline const char* c_str_or_null(const std::string& text) { return text.empty() ? nullptr : text.c_str(); }
}  // namespace detail

inline std::string version() { return flashps_version_string(); }

// Receives stage ("load", "encode", "denoise", "decode", "capture", "verify", "batch", ...),
// steps done, steps in the stage and seconds in it; returns false to cancel.
using ProgressFunction = std::function<bool(const std::string& stage, int step, int total_steps, double seconds)>;

namespace detail {
inline int progress_trampoline(const char* stage, int step, int total, double seconds, void* user_data) {
  try {
    const auto& function = *static_cast<const ProgressFunction*>(user_data);
    return function(stage ? stage : "", step, total, seconds) ? 1 : 0;
  } catch (...) {
    return 0;
  }
}
}  // namespace detail

using LogFunction = std::function<void(flashps_log_level level, const std::string& message)>;

struct RuntimeOptions {
  int threads = 0;  // 0: FLASHPS_THREADS, else all cores
  bool keep_freed_memory = true;
  LogFunction log;  // empty: warnings and errors to stderr
  flashps_log_level log_level = FLASHPS_LOG_WARNING;
};

namespace detail {
inline LogFunction& log_function() {
  static LogFunction function;
  return function;
}
inline void log_trampoline(flashps_log_level level, const char* message, void*) {
  try {
    if (log_function()) log_function()(level, message ? message : "");
  } catch (...) {
  }
}
}  // namespace detail

// Process-wide settings (threads, allocator, logging). Call before the first model.
inline void init(const RuntimeOptions& options = {}) {
  flashps_runtime_options runtime = flashps_runtime_default_options();
  runtime.threads = options.threads;
  runtime.keep_freed_memory = options.keep_freed_memory ? 1 : 0;
  runtime.log_level = options.log_level;
  detail::log_function() = options.log;
  if (options.log) runtime.log = detail::log_trampoline;
  check(flashps_init(&runtime));
}
inline int threads() { return flashps_threads(); }

// An 8-bit image that owns its pixels (interleaved, row-major; 1, 3 or 4 channels).
struct Image {
  uint32_t width = 0, height = 0, channels = 0;
  std::vector<uint8_t> pixels;

  Image() = default;
  Image(uint32_t w, uint32_t h, uint32_t c) : width(w), height(h), channels(c), pixels(size_t(w) * h * c, 0) {}
  bool empty() const { return pixels.empty(); }
  uint8_t* data() { return pixels.data(); }
  const uint8_t* data() const { return pixels.data(); }

  // A view for C calls (valid while this image is unchanged).
  flashps_image view() const {
    return flashps_image{width, height, channels, const_cast<uint8_t*>(pixels.data())};
  }
  // Takes a library-allocated image: copies its pixels and frees it.
  static Image adopt(flashps_image& owned) {
    Image image;
    image.width = owned.width;
    image.height = owned.height;
    image.channels = owned.channels;
    if (owned.pixels) image.pixels.assign(owned.pixels, owned.pixels + size_t(owned.width) * owned.height * owned.channels);
    flashps_image_free(&owned);
    return image;
  }
  static Image load(const std::string& path) {
    flashps_image loaded{};
    check(flashps_image_load(path.c_str(), &loaded));
    return adopt(loaded);
  }
  static Image decode(const void* bytes, size_t size, const std::string& name = "image") {
    flashps_image decoded{};
    check(flashps_image_decode(bytes, size, name.c_str(), &decoded));
    return adopt(decoded);
  }
  // Refuses (UNSUPPORTED) an image declaring more than max_pixels before allocating its pixels.
  static Image decode_bounded(const void* bytes, size_t size, const std::string& name, int64_t max_pixels) {
    flashps_image decoded{};
    check(flashps_image_decode_bounded(bytes, size, name.c_str(), max_pixels, &decoded));
    return adopt(decoded);
  }
  // "png" (fast compression) or "jpeg".
  std::vector<uint8_t> encode(const std::string& format = "png") const {
    const flashps_image image = view();
    void* bytes = nullptr;
    size_t size = 0;
    check(flashps_image_encode(&image, format.c_str(), &bytes, &size));
    std::vector<uint8_t> encoded(static_cast<const uint8_t*>(bytes), static_cast<const uint8_t*>(bytes) + size);
    flashps_buffer_free(bytes);
    return encoded;
  }
  void save(const std::string& path) const {
    const flashps_image image = view();
    check(flashps_image_save(path.c_str(), &image));
  }
};

}  // namespace flashps::sdk

#endif  // FLASHPS_CPP_COMMON_HPP
