#include "host_suites.h"

#include <algorithm>
#include <cstring>

#include "engine_functions.h"
#include "filter_session.h"

namespace flashps::plugins {
namespace {

// The engine functions of this process, set with the engine suite (one C API per process).
const EngineFunctions* process_engine = nullptr;

FilterSession& session_of(flashps_host_context* host) { return *static_cast<FilterSession*>(host); }

// Runs `body`; a C++ exception becomes `fallback` (plugin code must never see one).
template <typename Body, typename Result>
Result guarded(Body body, Result fallback) {
  try {
    return body();
  } catch (...) {
    return fallback;
  }
}

flashps_image view(const sdk::Image& image) {
  return flashps_image{image.width, image.height, image.channels, const_cast<uint8_t*>(image.pixels.data())};
}

// ---- image ----
void image_source(flashps_host_context* host, flashps_image* image) {
  if (image) *image = view(session_of(host).source());
}
int32_t image_selection(flashps_host_context* host, flashps_image* mask) {
  const sdk::Image& selection = session_of(host).selection();
  if (mask) *mask = selection.empty() ? flashps_image{} : view(selection);
  return selection.empty() ? 0 : 1;
}
int32_t image_expand_canvas(flashps_host_context* host, int32_t left, int32_t top, int32_t right, int32_t bottom) {
  return guarded([&] { return session_of(host).expand_canvas(left, top, right, bottom) ? 0 : -1; }, -1);
}
int32_t image_new_result(flashps_host_context* host, uint32_t width, uint32_t height, flashps_image* result) {
  return guarded(
      [&] {
        uint8_t* pixels = session_of(host).new_result(width, height);
        if (!pixels) return -1;
        if (result) *result = flashps_image{width, height, session_of(host).source().channels, pixels};
        return 0;
      },
      -1);
}

// ---- progress ----
int32_t progress_report(flashps_host_context* host, const char* stage, int32_t done, int32_t total) {
  return guarded([&] { return session_of(host).report_progress(stage, done, total) ? 1 : 0; }, 0);
}
int32_t progress_aborted(flashps_host_context* host) {
  return guarded([&] { return session_of(host).aborted() ? 1 : 0; }, 1);
}

// ---- log ----
std::string bounded(const char* text) { return text ? std::string(text, strnlen(text, 16 * 1024)) : ""; }
void log_message(flashps_host_context* host, int32_t level, const char* text) {
  guarded([&] { return session_of(host).log(level, bounded(text)), 0; }, 0);
}
void log_set_error(flashps_host_context* host, const char* text) {
  guarded([&] { return session_of(host).set_error(bounded(text)), 0; }, 0);
}
void log_note(flashps_host_context* host, const char* text) {
  guarded([&] { return session_of(host).note(bounded(text)), 0; }, 0);
}

// ---- parameters ----
int64_t parameter_int(flashps_host_context* host, const char* key) {
  const ParameterValue* value = session_of(host).parameter(key);
  return value && (value->type == ParameterType::integer || value->type == ParameterType::boolean) ? value->integer : 0;
}
double parameter_float(flashps_host_context* host, const char* key) {
  const ParameterValue* value = session_of(host).parameter(key);
  return value && (value->type == ParameterType::number || value->type == ParameterType::integer) ? value->number : 0;
}
int32_t parameter_bool(flashps_host_context* host, const char* key) {
  const ParameterValue* value = session_of(host).parameter(key);
  return value && value->type == ParameterType::boolean ? int32_t(value->integer) : 0;
}
const char* parameter_string(flashps_host_context* host, const char* key) {
  const ParameterValue* value = session_of(host).parameter(key);
  return value && (value->type == ParameterType::text || value->type == ParameterType::choice) ? value->text.c_str()
                                                                                               : "";
}

// ---- engine: the editor comes from the session, the rest is the public C API ----
flashps_editor* engine_editor(flashps_host_context* host) {
  return guarded([&] { return session_of(host).editor(); }, static_cast<flashps_editor*>(nullptr));
}
// Defaults into the plugin's struct, never more bytes than it says it has.
void engine_edit_default_params(flashps_edit_params* params) {
  if (!params || params->struct_size < sizeof(size_t)) return;
  const size_t size = std::min(params->struct_size, sizeof(flashps_edit_params));
  const flashps_edit_params defaults = process_engine->edit_default_params();
  std::memcpy(reinterpret_cast<char*>(params) + sizeof(size_t), reinterpret_cast<const char*>(&defaults) + sizeof(size_t),
              size - sizeof(size_t));
}

void engine_report_edit(flashps_host_context* host, const flashps_edit_stats* stats) {
  if (stats) guarded([&] { return session_of(host).report_edit(*stats), 0; }, 0);
}

// ---- memory ----
void* memory_allocate(flashps_host_context* host, size_t bytes) {
  return guarded([&] { return session_of(host).allocate(bytes); }, static_cast<void*>(nullptr));
}
void memory_release(flashps_host_context* host, void* memory) {
  guarded([&] { return session_of(host).release(memory), 0; }, 0);
}

const flashps_image_suite image_suite = {sizeof(flashps_image_suite), image_source, image_selection,
                                         image_expand_canvas, image_new_result};
const flashps_progress_suite progress_suite = {sizeof(flashps_progress_suite), progress_report, progress_aborted};
const flashps_log_suite log_suite = {sizeof(flashps_log_suite), log_message, log_set_error, log_note};
const flashps_parameter_suite parameter_suite = {sizeof(flashps_parameter_suite), parameter_int, parameter_float,
                                                 parameter_bool, parameter_string};
const flashps_memory_suite memory_suite = {sizeof(flashps_memory_suite), memory_allocate, memory_release};

}  // namespace

const flashps_host_suites* host_suites(const EngineFunctions* engine) {
  static const flashps_host_suites without_engine = {sizeof(flashps_host_suites), &image_suite, &progress_suite,
                                                     &log_suite, &parameter_suite, nullptr, &memory_suite};
  if (!engine) return &without_engine;
  // One process has one C API, so the first table built serves every later session.
  static const flashps_engine_suite engine_suite = [&] {
    flashps_engine_suite suite{};
    suite.struct_size = sizeof(suite);
    suite.editor = engine_editor;
    process_engine = engine;
    suite.edit_default_params = engine_edit_default_params;
    suite.editor_info = engine->editor_info;
    suite.template_lookup = engine->template_lookup;
    suite.template_register_masked = engine->template_register_masked;
    suite.edit = engine->edit;
    suite.image_free = engine->image_free;
    suite.last_error = engine->last_error;
    suite.report_edit = engine_report_edit;
    return suite;
  }();
  static const flashps_host_suites with_engine = {sizeof(flashps_host_suites), &image_suite, &progress_suite,
                                                  &log_suite, &parameter_suite, &engine_suite, &memory_suite};
  return &with_engine;
}

}  // namespace flashps::plugins
