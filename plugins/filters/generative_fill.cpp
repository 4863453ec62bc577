// Generative Fill: regenerates the selection from a prompt, one result per variation (seed + i).
// The first edit captures the image's template, so the ones after it compute only the selection.
#include "support/filter_support.h"

namespace fs = flashps_filters;

namespace {

int32_t generative_fill_main(int32_t selector, flashps_filter_record* record) {
  return fs::variations_main(selector, record, "variations");
}

constexpr flashps_parameter_spec kParameters[] = {
    fs::prompt_parameter(),
    fs::seed_parameter(),
    fs::steps_parameter(),
    fs::strength_parameter(),
    fs::int_parameter("variations", "Variations", "Results to make, with seeds seed, seed+1, ...", 1, 8, 1),
};

constexpr flashps_plugin_descriptor kDescriptor = {
    sizeof(flashps_plugin_descriptor),
    FLASHPS_PLUGIN_ABI_VERSION,
    "flashps.generative-fill",
    "Generative Fill…",
    fs::kFilterVersion,
    fs::kFilterVendor,
    "Generative",
    "Paints the selection anew from a prompt, matching its surroundings",
    FLASHPS_PLUGIN_NEEDS_MASK | FLASHPS_PLUGIN_NEEDS_MODEL | FLASHPS_PLUGIN_TAKES_TEXT,
    kParameters,
    sizeof(kParameters) / sizeof(kParameters[0]),
    generative_fill_main,
};

}  // namespace

extern "C" FLASHPS_PLUGIN_EXPORT const flashps_plugin_descriptor* flashps_plugin_entry(uint32_t host_abi_version) {
  (void)host_abi_version;
  return &kDescriptor;
}
