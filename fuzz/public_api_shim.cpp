// The few public C API functions that the HTTP edit-form path (sdk/src/http/edit_form.cpp, through
// the header-only C++ wrapper <flashps/flashps.hpp>) calls, for fuzz_http_request only.
//
// Why it exists: those functions live in libflashps, which needs LibTorch, while the fuzz project
// is built without LibTorch (fuzz/CMakeLists.txt). The real sdk/src/api/ sources cannot be linked
// here (api_support.cpp catches c10 and serve:: exceptions). This shim implements the same
// functions on the same core code (flashps::decode_image of sdk/src/core/image/image.cpp), mapping its
// exceptions to flashps_status as sdk/src/api/api_support.cpp's guarded() does, so the fuzzer
// sees the statuses and messages the server would. The edit settings' checks are the real ones:
// sdk/src/api/edit_params_check.cpp (with pipeline/edit_rules.cpp, engine/cache_mode.cpp) is
// compiled in. Keep it to what the link asks for; when the real functions change (image_api.cpp,
// runtime_api.cpp, editor_api.cpp's defaults, names_api.cpp), change these with them.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "api/edit_params_check.h"
#include "core/diagnostics/error.h"
#include "core/image/image.h"
#include "flashps/common.h"
#include "flashps/editor.h"

namespace {

thread_local std::string last_error_message;

flashps_status record(flashps_status status, std::string message) {
  last_error_message = std::move(message);
  return status;
}

// api_support.cpp's guarded() without the LibTorch and serving-engine cases, which the decoder
// cannot throw.
template <typename Body>
flashps_status guarded(const Body& body) {
  try {
    body();
    last_error_message.clear();
    return FLASHPS_OK;
  } catch (const flashps::Cancelled& error) {
    return record(FLASHPS_CANCELLED, error.what());
  } catch (const flashps::InvalidArgumentError& error) {
    return record(FLASHPS_INVALID_ARGUMENT, error.what());
  } catch (const flashps::NotFoundError& error) {
    return record(FLASHPS_NOT_FOUND, error.what());
  } catch (const flashps::IoError& error) {
    return record(FLASHPS_IO_ERROR, error.what());
  } catch (const flashps::CorruptDataError& error) {
    return record(FLASHPS_CORRUPT_DATA, error.what());
  } catch (const flashps::UnsupportedError& error) {
    return record(FLASHPS_UNSUPPORTED, error.what());
  } catch (const std::bad_alloc&) {
    return record(FLASHPS_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& error) {
    return record(FLASHPS_ERROR, error.what());
  } catch (...) {
    return record(FLASHPS_ERROR, "unknown error (an exception that is not a std::exception)");
  }
}

flashps_status invalid(const char* function, const std::string& message) {
  return record(FLASHPS_INVALID_ARGUMENT, std::string(function) + ": " + message);
}

}  // namespace

extern "C" {

// As runtime_api.cpp.
const char* flashps_status_name(flashps_status status) {
  switch (status) {
    case FLASHPS_OK: return "FLASHPS_OK";
    case FLASHPS_ERROR: return "FLASHPS_ERROR";
    case FLASHPS_CANCELLED: return "FLASHPS_CANCELLED";
    case FLASHPS_INVALID_ARGUMENT: return "FLASHPS_INVALID_ARGUMENT";
    case FLASHPS_NOT_FOUND: return "FLASHPS_NOT_FOUND";
    case FLASHPS_IO_ERROR: return "FLASHPS_IO_ERROR";
    case FLASHPS_CORRUPT_DATA: return "FLASHPS_CORRUPT_DATA";
    case FLASHPS_OUT_OF_MEMORY: return "FLASHPS_OUT_OF_MEMORY";
    case FLASHPS_UNSUPPORTED: return "FLASHPS_UNSUPPORTED";
    case FLASHPS_REJECTED: return "FLASHPS_REJECTED";
    case FLASHPS_DEADLINE_EXCEEDED: return "FLASHPS_DEADLINE_EXCEEDED";
  }
  return "FLASHPS_UNKNOWN_STATUS";
}

const char* flashps_last_error(void) { return last_error_message.c_str(); }

// As image_api.cpp (to_c_image inlined: check_image, then a malloc'ed copy of the pixels).
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
    const flashps::Image decoded =
        flashps::decode_image(static_cast<const uint8_t*>(bytes), size, source, budget);
    flashps::check_image(decoded, "result image");
    auto* pixels = static_cast<uint8_t*>(std::malloc(decoded.pixels.size()));
    if (!pixels) throw std::bad_alloc();
    std::memcpy(pixels, decoded.pixels.data(), decoded.pixels.size());
    *image = flashps_image{static_cast<uint32_t>(decoded.width), static_cast<uint32_t>(decoded.height),
                           static_cast<uint32_t>(decoded.channels), pixels};
  });
}

void flashps_image_free(flashps_image* image) {
  if (!image) return;
  std::free(image->pixels);
  *image = flashps_image{};
}

// As editor_api.cpp.
flashps_edit_params flashps_edit_default_params(void) {
  flashps_edit_params params{};
  params.struct_size = sizeof(params);
  params.strength = 1.0f;
  params.guidance_scale = -1.0f;
  params.cache_mode = FLASHPS_CACHE_AUTO;
  params.texture_transfer = -1;
  return params;
}

// As names_api.cpp, without read_params (the C++ wrapper passes its own sizeof).
flashps_status flashps_edit_params_check(const flashps_edit_params* params) {
  if (!params) return FLASHPS_OK;
  return guarded([&] { flashps::api::check_params(*params); });
}

const char* flashps_cache_mode_name(flashps_cache_mode mode) {
  try {
    return flashps::engine::cache_mode_name(flashps::api::to_mode(mode));
  } catch (const flashps::Error&) {
    return nullptr;
  }
}

flashps_status flashps_cache_mode_from_name(const char* name, flashps_cache_mode* mode) {
  if (!name || !mode) return invalid("flashps_cache_mode_from_name", "name and mode must not be NULL");
  return guarded([&] {
    try {
      *mode = flashps::api::to_c_mode(flashps::engine::cache_mode_from_name(name));
    } catch (const flashps::Error& error) {
      throw flashps::InvalidArgumentError(error.what());
    }
  });
}

}  // extern "C"
