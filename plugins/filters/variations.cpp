// Variations: `count` takes on the selection from one prompt, seeds seed .. seed + count - 1, one
// per ADVANCE. The first edit captures the template: the others compute only the selection.
#include "support/filter_support.h"

namespace fs = flashps_filters;

namespace {

int32_t variations_main(int32_t selector, flashps_filter_record* record) {
  return fs::variations_main(selector, record, "count");
}

constexpr flashps_parameter_spec kParameters[] = {
    fs::prompt_parameter(),
    fs::seed_parameter(),
    fs::steps_parameter(),
    fs::strength_parameter(),
    fs::int_parameter("count", "Count", "Results to make, with seeds seed, seed+1, ...", 2, 8, 4),
};

constexpr flashps_plugin_descriptor kDescriptor = {
    sizeof(flashps_plugin_descriptor),
    FLASHPS_PLUGIN_ABI_VERSION,
    "flashps.variations",
    "Variations…",
    fs::kFilterVersion,
    fs::kFilterVendor,
    "Generative",
    "Several versions of the selection to choose from, one per seed",
    FLASHPS_PLUGIN_NEEDS_MASK | FLASHPS_PLUGIN_NEEDS_MODEL | FLASHPS_PLUGIN_TAKES_TEXT,
    kParameters,
    sizeof(kParameters) / sizeof(kParameters[0]),
    variations_main,
};

}  // namespace

extern "C" FLASHPS_PLUGIN_EXPORT const flashps_plugin_descriptor* flashps_plugin_entry(uint32_t host_abi_version) {
  (void)host_abi_version;
  return &kDescriptor;
}
