// libFuzzer target: GgufFile::parse must either accept an input or throw flashps::Error; any
// other exception, crash, leak or sanitizer report is a bug. Accepted files are then decoded
// tensor by tensor as a loader would (bounded: a file that declares more values than the cap
// is only walked), so a validation gap shows up as an out-of-bounds read under ASan.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/diagnostics/error.h"
#include "core/files/gguf_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  std::shared_ptr<const flashps::GgufFile> file;
  try {
    file = flashps::GgufFile::parse(bytes, size, "fuzz.gguf");
  } catch (const flashps::Error&) {
    return 0;  // rejected cleanly
  }
  constexpr int64_t kMaxDecodedValues = int64_t(1) << 20;
  std::vector<float> values;
  for (const flashps::GgufTensor& tensor : file->tensors()) {
    if (file->find(tensor.name) != &tensor) __builtin_trap();  // index must agree with the list
    if (tensor.offset + tensor.byte_size > size) __builtin_trap();
    if (tensor.element_count > kMaxDecodedValues) continue;
    values.resize(size_t(tensor.element_count));
    try {
      file->dequantize(tensor, values.data());
    } catch (const flashps::Error&) {
      // NaN or infinite values are refused with an error; that is the contract.
    }
  }
  return 0;
}
