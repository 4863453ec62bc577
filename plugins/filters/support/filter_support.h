// Shared by FlashPS's first-party generative filters: parameter specs and values, edit parameters
// bridged to the host's progress, and the edit itself through the template cache. Only
// flashps/plugin.h is used: the filters reach the engine through record->suites.
#ifndef FLASHPS_FILTERS_FILTER_SUPPORT_H
#define FLASHPS_FILTERS_FILTER_SUPPORT_H

#include <flashps/plugin.h>

#include <cstdint>
#include <exception>
#include <new>
#include <string>

namespace flashps_filters {

constexpr const char* kFilterVersion = "1.0";
constexpr const char* kFilterVendor = "FlashPS";

// Parameter specs, usable in a constexpr table (the descriptor lives in static storage).
constexpr flashps_parameter_spec number_parameter(int32_t type, const char* key, const char* label,
                                                  const char* description, double minimum, double maximum,
                                                  double default_value) {
  return {sizeof(flashps_parameter_spec), key, label, description, type, minimum, maximum, default_value,
          nullptr, nullptr};
}
constexpr flashps_parameter_spec int_parameter(const char* key, const char* label, const char* description,
                                               double minimum, double maximum, double default_value) {
  return number_parameter(FLASHPS_PARAMETER_INT, key, label, description, minimum, maximum, default_value);
}
constexpr flashps_parameter_spec float_parameter(const char* key, const char* label, const char* description,
                                                 double minimum, double maximum, double default_value) {
  return number_parameter(FLASHPS_PARAMETER_FLOAT, key, label, description, minimum, maximum, default_value);
}
constexpr flashps_parameter_spec prompt_parameter() {
  return {sizeof(flashps_parameter_spec), "prompt", "Prompt", "What to paint; empty: match the surroundings",
          FLASHPS_PARAMETER_STRING, 0, 1000, 0, "", nullptr};
}
constexpr flashps_parameter_spec seed_parameter() {
  return int_parameter("seed", "Seed", "Same seed, same result", 0, 2147483647, 0);
}
constexpr flashps_parameter_spec steps_parameter() {
  return int_parameter("steps", "Steps", "Denoising steps; 0: the model's recommendation", 0, 100, 0);
}
constexpr flashps_parameter_spec strength_parameter() {
  return float_parameter("strength", "Strength", "How far the selection may move from the original", 0.01, 1, 1);
}

// What one edit asks of the engine, read from the filter's parameters.
struct EditSettings {
  std::string prompt;
  uint64_t seed = 0;
  int steps = 0;
  float strength = 1.0f;
  int mask_grow_pixels = -1;  // negative: the engine's default
};

// Parameters beyond seed and steps that a filter declares (the suite gives 0 for unknown keys).
enum OptionalParameter : unsigned { kPrompt = 1u << 0, kStrength = 1u << 1 };

EditSettings read_edit_settings(const flashps_filter_record* record, unsigned optional_parameters);

// The engine's defaults with the settings applied; `settings` must outlive the result (prompt).
flashps_edit_params make_edit_params(flashps_filter_record* record, const EditSettings& settings);

// Edits `image` where `mask` is white, capturing a template first when the cache has none, and
// hands the edit to the host as a new result (also described in *result when not null). Returns a
// flashps_plugin_result; on ERROR the reason was set.
int32_t edit_with_template_cache(flashps_filter_record* record, const flashps_image& image, const flashps_image& mask,
                                 const flashps_edit_params& params, flashps_image* result);

// One edit of the source's selection with settings.seed + seed_offset (a variation).
int32_t edit_selection(flashps_filter_record* record, const EditSettings& settings, uint64_t seed_offset);

// Variations: one edit per ADVANCE with seeds seed .. seed + count - 1; DONE after the last.
struct VariationState {
  EditSettings settings;
  int64_t count = 1;
  int64_t done = 0;
};
int32_t advance_variations(flashps_filter_record* record, VariationState& state);
// The whole selector sequence of a filter that makes `count_key` results of the selection, seeds
// seed .. seed + count - 1 (Generative Fill, Variations).
int32_t variations_main(int32_t selector, flashps_filter_record* record, const char* count_key);

// FLASHPS_PLUGIN_ERROR with the reason given to the host.
int32_t fail(const flashps_filter_record* record, const char* reason);
inline int32_t fail(const flashps_filter_record* record, const std::string& reason) {
  return fail(record, reason.c_str());
}
void note(const flashps_filter_record* record, const std::string& text);
bool cancelled(const flashps_filter_record* record);

// A filter's state, record->instance from PREPARE until FINISH.
template <class State>
int32_t create_instance(flashps_filter_record* record) {
  record->instance = new (std::nothrow) State();
  return record->instance != nullptr ? FLASHPS_PLUGIN_OK : fail(record, "out of memory for the filter's state");
}
template <class State>
State& instance(flashps_filter_record* record) {
  return *static_cast<State*>(record->instance);
}
template <class State>
void destroy_instance(flashps_filter_record* record) {
  delete static_cast<State*>(record->instance);
  record->instance = nullptr;
}

// Runs one selector's body, turning an exception into an error: none may cross the C ABI.
template <class Body>
int32_t run_guarded(flashps_filter_record* record, Body&& selector_body) noexcept {
  try {
    return selector_body();
  } catch (const std::bad_alloc&) {
    return fail(record, "out of memory");
  } catch (const std::exception& error) {
    return fail(record, error.what());
  } catch (...) {
    return fail(record, "unexpected failure");
  }
}

}  // namespace flashps_filters

#endif  // FLASHPS_FILTERS_FILTER_SUPPORT_H
