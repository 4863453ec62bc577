// What every C API source shares: exception-to-status translation, struct_size validation, the
// calling thread's last error and returned strings, and image conversion. Internal (not
// installed); the public surface is sdk/include/flashps/.
#pragma once
#include <cstddef>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/image/image.h"
#include "flashps/common.h"

namespace flashps::api {

// Runs body; maps exceptions to statuses and records the message for flashps_last_error():
// Cancelled -> CANCELLED, std::bad_alloc -> OUT_OF_MEMORY, the typed errors of core/diagnostics/error.h to
// their codes, filesystem errors -> IO_ERROR, other std::exception -> ERROR. Clears the last
// error on success.
flashps_status guarded(const std::function<void()>& body);

// The calling thread's last error message ("" after a successful call): flashps_last_error().
const char* last_error();

// Records `message` (prefixed by `function`: "flashps_edit: ...") and returns `status`.
flashps_status fail(flashps_status status, const char* function, const std::string& message);
inline flashps_status invalid(const char* function, const std::string& message) {
  return fail(FLASHPS_INVALID_ARGUMENT, function, message);
}

// struct_size validation (ONNX Runtime's rule): `given` may be any size from `first_layout_size`
// (the struct's first published layout) up to sizeof(Params); fields past it keep `defaults`.
// A zero size, a size below the first layout, or a larger size whose extra bytes are not all
// zero is refused: returns false after recording an INVALID_ARGUMENT message naming the struct.
// given == nullptr yields the defaults.
bool read_params_bytes(const void* given, size_t first_layout_size, size_t known_size, void* defaults,
                       const char* function, const char* struct_name);
template <typename Params>
bool read_params(const Params* given, size_t first_layout_size, Params& defaults_in_out, const char* function,
                 const char* struct_name) {
  if (!read_params_bytes(given, first_layout_size, sizeof(Params), &defaults_in_out, function, struct_name))
    return false;
  defaults_in_out.struct_size = sizeof(Params);
  return true;
}

// Output structs the caller sizes (stats, reports, info): checks struct_size as read_params does
// (without the tail rule: the library writes only what it knows), then copies min(size, ours).
bool check_output_size(size_t given_size, size_t first_layout_size, const char* function, const char* struct_name);
template <typename Out>
void write_output(Out* out, Out value) {
  const size_t size = out->struct_size;
  value.struct_size = size;
  std::memcpy(out, &value, size < sizeof(Out) ? size : sizeof(Out));
}

// Strings handed back to C callers that live "until the calling thread's next such call".
const char* thread_string(int slot, std::string value);
enum ThreadStringSlot { kNotesSlot = 0, kStoreSlot = 1, kBatchSlot = 2, kDirectorySlot = 3, kTemplateHashSlot = 4,
                       kSlotCount = 5 };
std::string join_lines(const std::vector<std::string>& lines);

// C image <-> SDK image. to_image validates (non-NULL pixels, channels 1/3/4, sane size) and
// copies; throws InvalidArgumentError naming `name`.
Image to_image(const flashps_image& image, const char* name);
// Allocates with malloc (freed by flashps_image_free) and copies.
void to_c_image(const Image& image, flashps_image* out);

}  // namespace flashps::api
