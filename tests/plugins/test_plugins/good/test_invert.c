/* test.invert: inverts the selected pixels' RGB in bands of 16 rows, one band per ADVANCE.
 * delay_ms sleeps before each band so that cancel and timeout tests can catch it mid-run;
 * fail_with makes START fail with that message. */
#define _POSIX_C_SOURCE 200809L
#include "../test_plugin_support.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { BAND_ROWS = 16 };

typedef struct invert_state {
  int64_t delay_ms;
  const char* fail_with; /* the host keeps it valid until FINISH */
  uint32_t rows_done;
  flashps_image source, selection, result;
} invert_state;

static void sleep_ms(int64_t milliseconds) {
  struct timespec delay = {(time_t)(milliseconds / 1000), (long)(milliseconds % 1000) * 1000000L};
  nanosleep(&delay, NULL);
}

static int32_t start(flashps_filter_record* record, invert_state* state) {
  const flashps_image_suite* image = record->suites->image;
  if (state->fail_with != NULL && state->fail_with[0] != '\0') return test_fail(record, state->fail_with);
  image->source(record->host, &state->source);
  if (image->selection(record->host, &state->selection) == 0) memset(&state->selection, 0, sizeof state->selection);
  if (image->new_result(record->host, state->source.width, state->source.height, &state->result) != 0)
    return test_fail(record, "the host refused a result");
  return FLASHPS_PLUGIN_OK;
}

static int32_t advance(flashps_filter_record* record, invert_state* state) {
  const flashps_progress_suite* progress = record->suites->progress;
  const uint32_t height = state->source.height;
  if (state->delay_ms > 0) sleep_ms(state->delay_ms);
  if (progress->aborted(record->host)) return FLASHPS_PLUGIN_CANCELLED;
  const uint32_t end_row = height - state->rows_done < BAND_ROWS ? height : state->rows_done + BAND_ROWS;
  test_invert_rows(&state->source, &state->selection, &state->result, state->rows_done, end_row);
  state->rows_done = end_row;
  if (!progress->report(record->host, "invert", (int32_t)end_row, (int32_t)height)) return FLASHPS_PLUGIN_CANCELLED;
  return end_row >= height ? FLASHPS_PLUGIN_DONE : FLASHPS_PLUGIN_OK;
}

static int32_t invert_main(int32_t selector, flashps_filter_record* record) {
  invert_state* state = record->instance;
  const flashps_parameter_suite* parameters = record->suites->parameters;
  switch (selector) {
    case FLASHPS_SELECTOR_PREPARE:
      record->instance = calloc(1, sizeof(invert_state));
      return record->instance != NULL ? FLASHPS_PLUGIN_OK : test_fail(record, "no memory for the state");
    case FLASHPS_SELECTOR_PARAMETERS:
      state->delay_ms = parameters->get_int(record->host, "delay_ms");
      state->fail_with = parameters->get_string(record->host, "fail_with");
      return FLASHPS_PLUGIN_OK;
    case FLASHPS_SELECTOR_START:
      return start(record, state);
    case FLASHPS_SELECTOR_ADVANCE:
      return advance(record, state);
    case FLASHPS_SELECTOR_FINISH:
      free(state);
      record->instance = NULL;
      return FLASHPS_PLUGIN_OK;
    default:
      return FLASHPS_PLUGIN_OK;
  }
}

static const flashps_parameter_spec parameters[] = {
    TEST_INT_PARAMETER("delay_ms", 0, 10000, 0),
    {sizeof(flashps_parameter_spec), "fail_with", "fail_with", "START fails with this message when not empty",
     FLASHPS_PARAMETER_STRING, 0, 0, 0, "", NULL},
};
static const flashps_plugin_descriptor descriptor = TEST_PLUGIN_DESCRIPTOR(
    "test.invert", "Invert (test)", "Inverts the selection's RGB, 16 rows per step", parameters, 2, invert_main);
TEST_PLUGIN_ENTRY(descriptor)
