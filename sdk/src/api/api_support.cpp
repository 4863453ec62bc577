#include "api/api_support.h"

#include <c10/util/Exception.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <new>

#include "core/diagnostics/error.h"
#include "serve/engine.h"

namespace flashps::api {
namespace {

thread_local std::string last_error_message;

flashps_status record(flashps_status status, std::string message) {
  last_error_message = std::move(message);
  return status;
}

}  // namespace

const char* last_error() { return last_error_message.c_str(); }

flashps_status guarded(const std::function<void()>& body) {
  // Most specific first: the typed errors derive from Error, Cancelled too.
  try {
    body();
    last_error_message.clear();
    return FLASHPS_OK;
  } catch (const Cancelled& error) {
    return record(FLASHPS_CANCELLED, error.what());
  } catch (const serve::RequestRejected& error) {
    return record(FLASHPS_REJECTED, error.what());
  } catch (const serve::DeadlineExceeded& error) {
    return record(FLASHPS_DEADLINE_EXCEEDED, error.what());
  } catch (const InvalidArgumentError& error) {
    return record(FLASHPS_INVALID_ARGUMENT, error.what());
  } catch (const NotFoundError& error) {
    return record(FLASHPS_NOT_FOUND, error.what());
  } catch (const IoError& error) {
    return record(FLASHPS_IO_ERROR, error.what());
  } catch (const CorruptDataError& error) {
    return record(FLASHPS_CORRUPT_DATA, error.what());
  } catch (const UnsupportedError& error) {
    return record(FLASHPS_UNSUPPORTED, error.what());
  } catch (const std::bad_alloc&) {
    return record(FLASHPS_OUT_OF_MEMORY, "out of memory");
  } catch (const c10::OutOfMemoryError& error) {  // LibTorch's device allocators
    return record(FLASHPS_OUT_OF_MEMORY, std::string("out of memory: ") + error.what_without_backtrace());
  } catch (const c10::Error& error) {  // without LibTorch's C++ backtrace, which is noise to users
    return record(FLASHPS_ERROR, error.what_without_backtrace());
  } catch (const std::filesystem::filesystem_error& error) {
    return record(FLASHPS_IO_ERROR, error.what());
  } catch (const std::exception& error) {
    return record(FLASHPS_ERROR, error.what());
  } catch (...) {
    return record(FLASHPS_ERROR, "unknown error (an exception that is not a std::exception)");
  }
}

flashps_status fail(flashps_status status, const char* function, const std::string& message) {
  return record(status, std::string(function) + ": " + message);
}

bool read_params_bytes(const void* given, size_t first_layout_size, size_t known_size, void* defaults,
                       const char* function, const char* struct_name) {
  if (!given) return true;
  size_t size = 0;
  std::memcpy(&size, given, sizeof size);  // every struct begins with its size_t struct_size
  const std::string name = struct_name;
  if (size == 0) {
    invalid(function, name + ".struct_size is 0: set it to sizeof(" + name +
                          "), or start from the library's default params function");
    return false;
  }
  if (size < first_layout_size) {
    invalid(function, name + ".struct_size is " + std::to_string(size) + ", smaller than the struct's first layout (" +
                          std::to_string(first_layout_size) + " bytes): not a " + name);
    return false;
  }
  if (size > known_size) {
    // A newer caller's struct: fields this library does not know must be unset (zero), else
    // the caller asked for something that would be silently ignored.
    const auto* bytes = static_cast<const unsigned char*>(given);
    for (size_t i = known_size; i < size; ++i) {
      if (bytes[i] != 0) {
        invalid(function, name + ".struct_size is " + std::to_string(size) + " but this library knows " +
                              std::to_string(known_size) + " bytes of it, and byte " + std::to_string(i) +
                              " beyond those is set: a newer field this library cannot honour");
        return false;
      }
    }
  }
  std::memcpy(defaults, given, size < known_size ? size : known_size);
  return true;
}

bool check_output_size(size_t given_size, size_t first_layout_size, const char* function, const char* struct_name) {
  const std::string name = struct_name;
  if (given_size == 0) {
    invalid(function, name + ".struct_size is 0: set it to sizeof(" + name + ") before the call");
    return false;
  }
  if (given_size < first_layout_size) {
    invalid(function, name + ".struct_size is " + std::to_string(given_size) +
                          ", smaller than the struct's first layout (" + std::to_string(first_layout_size) +
                          " bytes): not a " + name);
    return false;
  }
  return true;
}

const char* thread_string(int slot, std::string value) {
  thread_local std::array<std::string, kSlotCount> slots;
  if (slot < 0 || slot >= kSlotCount) throw std::logic_error("thread_string: no slot " + std::to_string(slot));
  slots[slot] = std::move(value);
  return slots[slot].c_str();
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string joined;
  for (const std::string& line : lines) {
    if (!joined.empty()) joined += '\n';
    joined += line;
  }
  return joined;
}

Image to_image(const flashps_image& image, const char* name) {
  const std::string label = name;
  if (!image.pixels) throw InvalidArgumentError(label + ": pixels is NULL");
  if (image.channels != 1 && image.channels != 3 && image.channels != 4)
    throw InvalidArgumentError(label + ": channels is " + std::to_string(image.channels) + "; it must be 1, 3 or 4");
  // The decoders' budget, so an image flashps_image_load accepted is accepted here too.
  const int64_t max_pixels = image_budget().max_pixels;
  if (image.width == 0 || image.height == 0 || image.width > static_cast<uint32_t>(kMaxImageSide) ||
      image.height > static_cast<uint32_t>(kMaxImageSide) ||
      uint64_t{image.width} * image.height > static_cast<uint64_t>(max_pixels))
    throw InvalidArgumentError(label + ": size " + std::to_string(image.width) + "x" + std::to_string(image.height) +
                               " is outside 1.." + std::to_string(kMaxImageSide) + " per side (at most " +
                               std::to_string(max_pixels) + " pixels, FLASHPS_MAX_IMAGE_PIXELS)");
  Image result(static_cast<int>(image.width), static_cast<int>(image.height), static_cast<int>(image.channels));
  std::memcpy(result.pixels.data(), image.pixels, result.pixels.size());
  return result;
}

void to_c_image(const Image& image, flashps_image* out) {
  check_image(image, "result image");
  auto* pixels = static_cast<uint8_t*>(std::malloc(image.pixels.size()));
  if (!pixels) throw std::bad_alloc();
  std::memcpy(pixels, image.pixels.data(), image.pixels.size());
  out->width = static_cast<uint32_t>(image.width);
  out->height = static_cast<uint32_t>(image.height);
  out->channels = static_cast<uint32_t>(image.channels);
  out->pixels = pixels;
}

}  // namespace flashps::api
