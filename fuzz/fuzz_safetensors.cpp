// libFuzzer target: SafetensorsFile::parse must either accept an input or throw flashps::Error;
// any other exception, crash, leak or sanitizer report is a bug. Accepted files are then walked
// like a loader would, so a validation gap shows up as an out-of-bounds read under ASan.
#include <cstddef>
#include <cstdint>

#include "core/diagnostics/error.h"
#include "core/files/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  std::shared_ptr<const flashps::SafetensorsFile> file;
  try {
    file = flashps::SafetensorsFile::parse(bytes, size, "fuzz.safetensors");
  } catch (const flashps::Error&) {
    return 0;  // rejected cleanly
  }
  uint8_t checksum = 0;
  for (const flashps::TensorInfo& tensor : file->tensors()) {
    if (file->find(tensor.name) != &tensor) __builtin_trap();  // index must agree with the list
    if (tensor.byte_size() !=
        static_cast<size_t>(tensor.element_count()) * flashps::dtype_size(tensor.dtype)) {
      __builtin_trap();
    }
    const uint8_t* data = file->data(tensor);
    for (size_t i = 0; i < tensor.byte_size(); ++i) checksum ^= data[i];
  }
  for (const auto& [key, value] : file->metadata())
    checksum ^= static_cast<uint8_t>(key.size() + value.size());
  volatile uint8_t sink = checksum;  // keep the reads from being optimised away
  (void)sink;
  return 0;
}
