/* test.results: `count` results, result i (from 0) filled with the value 10 * i, and the note
 * "made N": proves that several results and notes come back in order. */
#include "../test_plugin_support.h"

#include <stdio.h>
#include <string.h>

static int32_t make_results(flashps_filter_record* record) {
  const int64_t count = record->suites->parameters->get_int(record->host, "count");
  flashps_image source, result;
  record->suites->image->source(record->host, &source);
  for (int64_t i = 0; i < count; ++i) {
    if (record->suites->image->new_result(record->host, source.width, source.height, &result) != 0)
      return test_fail(record, "the host refused a result");
    memset(result.pixels, (int)(10 * i), (size_t)result.width * result.height * result.channels);
  }
  char note[32];
  snprintf(note, sizeof note, "made %d", (int)count);
  record->suites->log->note(record->host, note);
  return FLASHPS_PLUGIN_OK;
}

static int32_t results_main(int32_t selector, flashps_filter_record* record) {
  if (selector == FLASHPS_SELECTOR_START) return make_results(record);
  return selector == FLASHPS_SELECTOR_ADVANCE ? FLASHPS_PLUGIN_DONE : FLASHPS_PLUGIN_OK;
}

static const flashps_parameter_spec parameters[] = {TEST_INT_PARAMETER("count", 1, 4, 2)};
static const flashps_plugin_descriptor descriptor = TEST_PLUGIN_DESCRIPTOR(
    "test.results", "Results (test)", "Makes count flat results: 0, 10, 20, 30", parameters, 1, results_main);
TEST_PLUGIN_ENTRY(descriptor)
