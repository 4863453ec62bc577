// Remove Object: regenerates the selection without a prompt, so that the surroundings fill it in.
// The selection is grown first: an outline drawn tightly leaves the object's rim behind.
#include "support/filter_support.h"

namespace fs = flashps_filters;

namespace {

int32_t remove_object_main(int32_t selector, flashps_filter_record* record) {
  return fs::run_guarded(record, [&]() -> int32_t {
    switch (selector) {
      case FLASHPS_SELECTOR_PREPARE:
        return fs::create_instance<fs::EditSettings>(record);
      case FLASHPS_SELECTOR_PARAMETERS: {
        fs::EditSettings& settings = fs::instance<fs::EditSettings>(record);
        settings = fs::read_edit_settings(record, 0);
        settings.mask_grow_pixels = int(record->suites->parameters->get_int(record->host, "grow"));
        return FLASHPS_PLUGIN_OK;
      }
      case FLASHPS_SELECTOR_ADVANCE: {
        const fs::EditSettings& settings = fs::instance<fs::EditSettings>(record);
        const int32_t edited = fs::edit_selection(record, settings, 0);
        if (edited != FLASHPS_PLUGIN_OK) return edited;
        if (settings.mask_grow_pixels > 0)
          fs::note(record, "mask grown by " + std::to_string(settings.mask_grow_pixels) + " px");
        return FLASHPS_PLUGIN_DONE;
      }
      case FLASHPS_SELECTOR_FINISH:
        fs::destroy_instance<fs::EditSettings>(record);
        return FLASHPS_PLUGIN_OK;
      default:
        return FLASHPS_PLUGIN_OK;
    }
  });
}

constexpr flashps_parameter_spec kParameters[] = {
    fs::seed_parameter(),
    fs::steps_parameter(),
    fs::int_parameter("grow", "Grow selection", "Pixels added around the selection before the edit", 0, 64, 8),
};

constexpr flashps_plugin_descriptor kDescriptor = {
    sizeof(flashps_plugin_descriptor),
    FLASHPS_PLUGIN_ABI_VERSION,
    "flashps.remove-object",
    "Remove Object",
    fs::kFilterVersion,
    fs::kFilterVendor,
    "Generative",
    "Removes what is selected and fills the hole from its surroundings",
    FLASHPS_PLUGIN_NEEDS_MASK | FLASHPS_PLUGIN_NEEDS_MODEL,
    kParameters,
    sizeof(kParameters) / sizeof(kParameters[0]),
    remove_object_main,
};

}  // namespace

extern "C" FLASHPS_PLUGIN_EXPORT const flashps_plugin_descriptor* flashps_plugin_entry(uint32_t host_abi_version) {
  (void)host_abi_version;
  return &kDescriptor;
}
