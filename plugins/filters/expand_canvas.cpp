// Expand Canvas: grows the image on any side and paints the new border to continue the picture.
// The host pads the source (repeating its edge) and selects the border; the edit fills it.
#include "support/filter_support.h"

namespace fs = flashps_filters;

namespace {

// The canvas must grow in PREPARE, before the source is handed out, so the sides are read there.
int32_t expand(flashps_filter_record* record) {
  const flashps_parameter_suite* parameters = record->suites->parameters;
  const auto side = [&](const char* key) { return int32_t(parameters->get_int(record->host, key)); };
  const int32_t left = side("left"), top = side("top"), right = side("right"), bottom = side("bottom");
  if (left == 0 && top == 0 && right == 0 && bottom == 0)
    return fs::fail(record, "nothing to expand: give left, top, right or bottom");
  if (record->suites->image->expand_canvas(record->host, left, top, right, bottom) != 0)
    return fs::fail(record, "the host could not expand the canvas by " + std::to_string(left) + ", " +
                                std::to_string(top) + ", " + std::to_string(right) + ", " +
                                std::to_string(bottom) + " px (left, top, right, bottom)");
  return FLASHPS_PLUGIN_OK;
}

int32_t expand_canvas_main(int32_t selector, flashps_filter_record* record) {
  return fs::run_guarded(record, [&]() -> int32_t {
    switch (selector) {
      case FLASHPS_SELECTOR_PREPARE: {
        const int32_t created = fs::create_instance<fs::EditSettings>(record);
        return created != FLASHPS_PLUGIN_OK ? created : expand(record);
      }
      case FLASHPS_SELECTOR_PARAMETERS:
        fs::instance<fs::EditSettings>(record) = fs::read_edit_settings(record, fs::kPrompt);
        return FLASHPS_PLUGIN_OK;
      case FLASHPS_SELECTOR_ADVANCE: {
        const int32_t edited = fs::edit_selection(record, fs::instance<fs::EditSettings>(record), 0);
        return edited != FLASHPS_PLUGIN_OK ? edited : FLASHPS_PLUGIN_DONE;
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
    fs::int_parameter("left", "Left", "Pixels added on the left", 0, 1024, 64),
    fs::int_parameter("top", "Top", "Pixels added at the top", 0, 1024, 64),
    fs::int_parameter("right", "Right", "Pixels added on the right", 0, 1024, 64),
    fs::int_parameter("bottom", "Bottom", "Pixels added at the bottom", 0, 1024, 64),
    fs::prompt_parameter(),
    fs::seed_parameter(),
    fs::steps_parameter(),
};

constexpr flashps_plugin_descriptor kDescriptor = {
    sizeof(flashps_plugin_descriptor),
    FLASHPS_PLUGIN_ABI_VERSION,
    "flashps.expand-canvas",
    "Expand Canvas…",
    fs::kFilterVersion,
    fs::kFilterVendor,
    "Generative",
    "Enlarges the canvas and paints the new border to continue the picture",
    FLASHPS_PLUGIN_NEEDS_MODEL | FLASHPS_PLUGIN_TAKES_TEXT,
    kParameters,
    sizeof(kParameters) / sizeof(kParameters[0]),
    expand_canvas_main,
};

}  // namespace

extern "C" FLASHPS_PLUGIN_EXPORT const flashps_plugin_descriptor* flashps_plugin_entry(uint32_t host_abi_version) {
  (void)host_abi_version;
  return &kDescriptor;
}
