/* test.frozen-v1: test.invert without the delay, built against the frozen version-1 header
 * (tests/plugins/abi_v1 comes first on the include path): an old plugin that must keep loading
 * and running. It shares no code with the other test plugins, which follow the current header. */
#include <flashps/plugin.h>

#include <string.h>

static int32_t invert(flashps_filter_record* record) {
  const flashps_image_suite* image = record->suites->image;
  flashps_image source, selection, result;
  image->source(record->host, &source);
  const int has_selection = image->selection(record->host, &selection) != 0;
  if (image->new_result(record->host, source.width, source.height, &result) != 0) {
    record->suites->log->set_error(record->host, "the host refused a result");
    return FLASHPS_PLUGIN_ERROR;
  }
  for (size_t i = 0; i < (size_t)source.width * source.height; ++i) {
    const int selected = !has_selection || selection.pixels[i] >= 128;
    for (uint32_t c = 0; c < source.channels; ++c) {
      const uint8_t value = source.pixels[i * source.channels + c];
      result.pixels[i * source.channels + c] = selected && c < 3 ? (uint8_t)(255 - value) : value;
    }
  }
  return FLASHPS_PLUGIN_OK;
}

static int32_t frozen_main(int32_t selector, flashps_filter_record* record) {
  if (selector == FLASHPS_SELECTOR_START) return invert(record);
  return selector == FLASHPS_SELECTOR_ADVANCE ? FLASHPS_PLUGIN_DONE : FLASHPS_PLUGIN_OK;
}

static const flashps_plugin_descriptor descriptor = {
    sizeof(flashps_plugin_descriptor), FLASHPS_PLUGIN_ABI_VERSION, "test.frozen-v1", "Frozen v1 (test)", "1.0",
    "FlashPS tests", "Test", "test.invert built against the version-1 header", 0, NULL, 0, frozen_main};

FLASHPS_PLUGIN_EXPORT const flashps_plugin_descriptor* flashps_plugin_entry(uint32_t host_abi_version) {
  (void)host_abi_version;
  return &descriptor;
}
