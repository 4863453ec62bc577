#include "filter_support.h"

#include <algorithm>
#include <cstring>

namespace flashps_filters {
namespace {

std::string engine_error(const flashps_engine_suite* engine) {
  const char* text = engine != nullptr && engine->last_error != nullptr ? engine->last_error() : nullptr;
  return text != nullptr && *text != '\0' ? text : "no reason given";
}

// The engine's progress callback, forwarded to the host; its 0 (cancelled) stops the edit.
int forward_progress(const char* stage, int step, int total_steps, double /*stage_seconds*/, void* user_data) {
  const auto* record = static_cast<const flashps_filter_record*>(user_data);
  return record->suites->progress->report(record->host, stage, step, total_steps) != 0 ? 1 : 0;
}

// Maps a failed engine call to the plugin's result, giving the reason for an error.
int32_t engine_failure(const flashps_filter_record* record, const char* what, flashps_status status) {
  if (status == FLASHPS_CANCELLED) return FLASHPS_PLUGIN_CANCELLED;
  return fail(record, std::string(what) + ": " + engine_error(record->suites->engine));
}

flashps_edit_stats empty_stats() {
  flashps_edit_stats stats{};
  stats.struct_size = sizeof(stats);
  return stats;
}

// Copies an edit into a host result of the same size, converting RGB <-> RGBA (opaque alpha).
void copy_pixels(const flashps_image& from, flashps_image& to) {
  if (from.channels == to.channels) {
    std::memcpy(to.pixels, from.pixels, size_t(from.width) * from.height * from.channels);
    return;
  }
  const size_t pixel_count = size_t(from.width) * from.height;
  const uint32_t shared = std::min(from.channels, to.channels);
  for (size_t i = 0; i < pixel_count; ++i)
    for (uint32_t c = 0; c < to.channels; ++c)
      to.pixels[i * to.channels + c] = c < shared ? from.pixels[i * from.channels + c] : 255;
}

// Captures the template for the edits to come; a capture that fails only costs speed.
int32_t capture_template(flashps_filter_record* record, flashps_editor* editor, const flashps_image& image,
                         const flashps_image& mask, const flashps_edit_params& params) {
  const flashps_engine_suite* engine = record->suites->engine;
  flashps_edit_stats stats = empty_stats();
  const flashps_status status = engine->template_register_masked(editor, &image, &mask, &params, 1, 1, &stats);
  if (status == FLASHPS_CANCELLED) return FLASHPS_PLUGIN_CANCELLED;
  if (status != FLASHPS_OK) {
    const std::string reason = "template not captured: " + engine_error(engine);
    record->suites->log->message(record->host, FLASHPS_PLUGIN_LOG_WARNING, reason.c_str());
    note(record, reason);
    return FLASHPS_PLUGIN_OK;
  }
  // The host's report says "template captured", or passes on the notes of a read-only store.
  engine->report_edit(record->host, &stats);
  return FLASHPS_PLUGIN_OK;
}

}  // namespace

int32_t fail(const flashps_filter_record* record, const char* reason) {
  record->suites->log->set_error(record->host, reason);
  return FLASHPS_PLUGIN_ERROR;
}

void note(const flashps_filter_record* record, const std::string& text) {
  record->suites->log->note(record->host, text.c_str());
}

bool cancelled(const flashps_filter_record* record) {
  return record->suites->progress->aborted(record->host) != 0;
}

EditSettings read_edit_settings(const flashps_filter_record* record, unsigned optional_parameters) {
  const flashps_parameter_suite* parameters = record->suites->parameters;
  EditSettings settings;
  settings.seed = uint64_t(parameters->get_int(record->host, "seed"));
  settings.steps = int(parameters->get_int(record->host, "steps"));
  if (optional_parameters & kPrompt) {
    const char* prompt = parameters->get_string(record->host, "prompt");
    settings.prompt = prompt != nullptr ? prompt : "";
  }
  if (optional_parameters & kStrength) settings.strength = float(parameters->get_float(record->host, "strength"));
  return settings;
}

flashps_edit_params make_edit_params(flashps_filter_record* record, const EditSettings& settings) {
  flashps_edit_params params{};
  params.struct_size = sizeof(params);  // the host fills this many bytes, whatever its own size
  record->suites->engine->edit_default_params(&params);
  params.seed = settings.seed;
  params.steps = settings.steps;
  params.strength = settings.strength;
  if (settings.mask_grow_pixels >= 0) params.mask_grow_pixels = settings.mask_grow_pixels;
  params.progress = forward_progress;
  params.user_data = record;
  if (FLASHPS_PLUGIN_HAS_FIELD(&params, flashps_edit_params, prompt)) params.prompt = settings.prompt.c_str();
  return params;
}

int32_t edit_with_template_cache(flashps_filter_record* record, const flashps_image& image, const flashps_image& mask,
                                 const flashps_edit_params& params, flashps_image* result) {
  const flashps_engine_suite* engine = record->suites->engine;
  if (engine == nullptr) return fail(record, "no model: this host offers no engine");
  flashps_editor* editor = engine->editor(record->host);
  if (editor == nullptr) return fail(record, "no model: " + engine_error(engine));

  int found = 0;
  flashps_status status = engine->template_lookup(editor, &image, &mask, &params, &found);
  if (status != FLASHPS_OK) return engine_failure(record, "template lookup failed", status);
  if (!found) {
    const int32_t captured = capture_template(record, editor, image, mask, params);
    if (captured != FLASHPS_PLUGIN_OK) return captured;
  }
  if (cancelled(record)) return FLASHPS_PLUGIN_CANCELLED;

  flashps_image edited{};
  flashps_edit_stats stats = empty_stats();
  status = engine->edit(editor, &image, &mask, &params, &edited, &stats);
  if (status != FLASHPS_OK) {
    engine->image_free(&edited);
    return engine_failure(record, "edit failed", status);
  }
  engine->report_edit(record->host, &stats);

  flashps_image host_result{};
  if (record->suites->image->new_result(record->host, edited.width, edited.height, &host_result) != 0) {
    engine->image_free(&edited);
    return fail(record, "the host refused a result of " + std::to_string(edited.width) + "x" +
                            std::to_string(edited.height));
  }
  copy_pixels(edited, host_result);
  engine->image_free(&edited);
  if (result != nullptr) *result = host_result;
  return FLASHPS_PLUGIN_OK;
}

int32_t edit_selection(flashps_filter_record* record, const EditSettings& settings, uint64_t seed_offset) {
  if (cancelled(record)) return FLASHPS_PLUGIN_CANCELLED;
  if (record->suites->engine == nullptr) return fail(record, "no model: this host offers no engine");
  flashps_image source{}, selection{};
  record->suites->image->source(record->host, &source);
  if (record->suites->image->selection(record->host, &selection) == 0)
    return fail(record, "select the area to edit first");
  EditSettings variation = settings;
  variation.seed += seed_offset;
  const flashps_edit_params params = make_edit_params(record, variation);
  return edit_with_template_cache(record, source, selection, params, nullptr);
}

int32_t advance_variations(flashps_filter_record* record, VariationState& state) {
  const int32_t edited = edit_selection(record, state.settings, uint64_t(state.done));
  if (edited != FLASHPS_PLUGIN_OK) return edited;
  if (state.count > 1)  // the seed to give again to get this one alone
    note(record, "variation " + std::to_string(state.done + 1) + ": seed " +
                     std::to_string(state.settings.seed + uint64_t(state.done)));
  return ++state.done >= state.count ? FLASHPS_PLUGIN_DONE : FLASHPS_PLUGIN_OK;
}

int32_t variations_main(int32_t selector, flashps_filter_record* record, const char* count_key) {
  return run_guarded(record, [&]() -> int32_t {
    switch (selector) {
      case FLASHPS_SELECTOR_PREPARE:
        return create_instance<VariationState>(record);
      case FLASHPS_SELECTOR_PARAMETERS: {
        VariationState& state = instance<VariationState>(record);
        state.settings = read_edit_settings(record, kPrompt | kStrength);
        state.count = record->suites->parameters->get_int(record->host, count_key);
        return FLASHPS_PLUGIN_OK;
      }
      case FLASHPS_SELECTOR_ADVANCE:
        return advance_variations(record, instance<VariationState>(record));
      case FLASHPS_SELECTOR_FINISH:
        destroy_instance<VariationState>(record);
        return FLASHPS_PLUGIN_OK;
      default:
        return FLASHPS_PLUGIN_OK;
    }
  });
}

}  // namespace flashps_filters
