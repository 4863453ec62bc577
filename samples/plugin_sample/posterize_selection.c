/* Posterize Selection: a sample third-party FlashPS filter. Reduces each RGB channel to `levels`
 * steps inside the selection, blended by the mask's value (soft edges stay soft), or the whole
 * image when nothing is selected; alpha is left alone. It works in bands of rows so that the host
 * shows progress and a cancel takes effect quickly.
 * Build: see README.md. Uses only <flashps/plugin.h>: it links nothing of FlashPS. */
#include <flashps/plugin.h>

#include <string.h>

enum { BAND_ROWS = 64 };

/* Lives from PREPARE to FINISH, allocated through the host's memory suite (counted in the budget). */
typedef struct posterize_state {
  int levels;
  int has_selection;
  uint32_t rows_done;
  flashps_image source, selection, result;
} posterize_state;

static int32_t fail(const flashps_filter_record* record, const char* reason) {
  record->suites->log->set_error(record->host, reason);
  return FLASHPS_PLUGIN_ERROR;
}

/* The nearest of `levels` evenly spaced values, blended with the original by `weight` of 255. */
static uint8_t posterize_value(uint8_t value, int levels, uint8_t weight) {
  const int steps = levels - 1;
  const int step = (value * steps + 127) / 255;
  const int posterized = (step * 255 + steps / 2) / steps;
  return (uint8_t)((value * (255 - weight) + posterized * weight + 127) / 255);
}

static void posterize_rows(posterize_state* state, uint32_t first_row, uint32_t end_row) {
  const flashps_image* source = &state->source;
  for (uint32_t y = first_row; y < end_row; ++y) {
    for (uint32_t x = 0; x < source->width; ++x) {
      const size_t pixel = (size_t)y * source->width + x;
      const uint8_t weight = state->has_selection ? state->selection.pixels[pixel] : 255;
      const uint8_t* from = source->pixels + pixel * source->channels;
      uint8_t* to = state->result.pixels + pixel * source->channels;
      for (uint32_t c = 0; c < source->channels; ++c)
        to[c] = c < 3 ? posterize_value(from[c], state->levels, weight) : from[c];
    }
  }
}

static int32_t prepare(flashps_filter_record* record) {
  posterize_state* state = record->suites->memory->allocate(record->host, sizeof(posterize_state));
  if (state == NULL) return fail(record, "no memory for the filter's state");
  memset(state, 0, sizeof *state);
  record->instance = state;
  return FLASHPS_PLUGIN_OK;
}

static int32_t start(flashps_filter_record* record, posterize_state* state) {
  const flashps_image_suite* image = record->suites->image;
  image->source(record->host, &state->source);
  state->has_selection = image->selection(record->host, &state->selection) != 0;
  if (image->new_result(record->host, state->source.width, state->source.height, &state->result) != 0)
    return fail(record, "the host refused a result image");
  return FLASHPS_PLUGIN_OK;
}

/* One band per call: the host regains control between bands. */
static int32_t advance(flashps_filter_record* record, posterize_state* state) {
  const flashps_progress_suite* progress = record->suites->progress;
  const uint32_t height = state->source.height;
  if (progress->aborted(record->host)) return FLASHPS_PLUGIN_CANCELLED;
  const uint32_t end_row = height - state->rows_done < BAND_ROWS ? height : state->rows_done + BAND_ROWS;
  posterize_rows(state, state->rows_done, end_row);
  state->rows_done = end_row;
  if (!progress->report(record->host, "posterize", (int32_t)state->rows_done, (int32_t)height))
    return FLASHPS_PLUGIN_CANCELLED;
  return state->rows_done >= height ? FLASHPS_PLUGIN_DONE : FLASHPS_PLUGIN_OK;
}

static int32_t posterize_main(int32_t selector, flashps_filter_record* record) {
  posterize_state* state = record->instance;
  switch (selector) {
    case FLASHPS_SELECTOR_PREPARE:
      return prepare(record);
    case FLASHPS_SELECTOR_PARAMETERS: /* already checked against the schema: 2..16 */
      state->levels = (int)record->suites->parameters->get_int(record->host, "levels");
      return FLASHPS_PLUGIN_OK;
    case FLASHPS_SELECTOR_START:
      return start(record, state);
    case FLASHPS_SELECTOR_ADVANCE:
      return advance(record, state);
    case FLASHPS_SELECTOR_FINISH: /* also after an error or a cancel */
      if (state != NULL) record->suites->memory->release(record->host, state);
      record->instance = NULL;
      return FLASHPS_PLUGIN_OK;
    default: /* selectors of later ABI versions */
      return FLASHPS_PLUGIN_OK;
  }
}

static const flashps_parameter_spec parameters[] = {
    {sizeof(flashps_parameter_spec), "levels", "Levels", "Steps per colour channel", FLASHPS_PARAMETER_INT, 2, 16,
     4, NULL, NULL},
};

static const flashps_plugin_descriptor descriptor = {
    sizeof(flashps_plugin_descriptor),
    FLASHPS_PLUGIN_ABI_VERSION,
    "sample.posterize-selection",
    "Posterize Selection…",
    "1.0",
    "FlashPS samples",
    "Adjust",
    "Reduces the selection's colours to a few levels per channel",
    0,
    parameters,
    sizeof parameters / sizeof parameters[0],
    posterize_main,
};

FLASHPS_PLUGIN_EXPORT const flashps_plugin_descriptor* flashps_plugin_entry(uint32_t host_abi_version) {
  (void)host_abi_version; /* the host refuses descriptors newer than itself */
  return &descriptor;
}
