#include "test_plugin_support.h"

#include <string.h>

int32_t test_fail(const flashps_filter_record* record, const char* reason) {
  record->suites->log->set_error(record->host, reason);
  return FLASHPS_PLUGIN_ERROR;
}

int32_t test_copy_source(flashps_filter_record* record) {
  flashps_image source, result;
  record->suites->image->source(record->host, &source);
  if (record->suites->image->new_result(record->host, source.width, source.height, &result) != 0)
    return test_fail(record, "the host refused a result");
  memcpy(result.pixels, source.pixels, (size_t)source.width * source.height * source.channels);
  return FLASHPS_PLUGIN_OK;
}

int32_t test_copy_main(int32_t selector, flashps_filter_record* record) {
  if (selector == FLASHPS_SELECTOR_START) return test_copy_source(record);
  return selector == FLASHPS_SELECTOR_ADVANCE ? FLASHPS_PLUGIN_DONE : FLASHPS_PLUGIN_OK;
}

void test_invert_rows(const flashps_image* source, const flashps_image* selection, flashps_image* result,
                      uint32_t first_row, uint32_t end_row) {
  const int has_selection = selection->width != 0 && selection->pixels != NULL;
  for (size_t i = (size_t)first_row * source->width; i < (size_t)end_row * source->width; ++i) {
    const int selected = !has_selection || selection->pixels[i] >= 128;
    for (uint32_t c = 0; c < source->channels; ++c) {
      const uint8_t value = source->pixels[i * source->channels + c];
      result->pixels[i * source->channels + c] = selected && c < 3 ? (uint8_t)(255 - value) : value;
    }
  }
}
