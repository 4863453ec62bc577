// libFuzzer target for `flashps batch` manifests: any input must parse or throw flashps::Error,
// never crash, hang or leak. Seeds: fuzz/corpus/batch_manifest/.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

#include "core/diagnostics/error.h"
#include "serve_tools/batch_manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto manifest = flashps::serve::parse_batch_manifest(
        std::string(reinterpret_cast<const char*>(data), size), "fuzz-input");
    std::set<std::string> outputs;
    for (const auto& item : manifest.items) {
      // What the parser promises: required fields present, values in range, outputs unique.
      if (item.image.empty() || item.mask.empty() || item.output.empty()) std::abort();
      // steps 0 means "the model's recommendation" (field absent); an explicit value is 1..1000.
      if (item.steps < 0 || item.steps > 1000 || !(item.strength > 0 && item.strength <= 1)) std::abort();
      if (!outputs.insert(item.output).second) std::abort();
    }
  } catch (const flashps::Error&) {
  }
  return 0;
}
