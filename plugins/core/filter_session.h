// One run of a filter: the host suites over an image, its selection and parameter values, and
// the selector sequence PREPARE -> PARAMETERS -> START -> ADVANCE... -> FINISH. The same code
// hosts a plugin inside a program and inside flashps-plugin-runner.
#ifndef FLASHPS_PLUGINS_FILTER_SESSION_H
#define FLASHPS_PLUGINS_FILTER_SESSION_H

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engine_functions.h"
#include "flashps/plugin.h"
#include "flashps/plugin_host.hpp"
#include "parameter_values.h"

// The C ABI's opaque host handle; a FilterSession is one.
struct flashps_host_context {};

namespace flashps::plugins {

struct SessionHooks {
  std::function<bool(const Progress&)> progress;  // false: cancel
  std::function<bool()> cancelled;                // polled by the progress suite's aborted()
  std::function<void(int level, const std::string& text)> log;
  // The engine suite's editor, opened on first use; nullptr with *error set when there is none.
  std::function<flashps_editor*(std::string* error)> editor;
  const EngineFunctions* engine = nullptr;  // nullptr: no engine suite
  int64_t memory_budget_bytes = int64_t(2) << 30;
};

// What an edit the plugin reported (engine suite report_edit) says, for the run's report.
struct EditReport {
  bool cache_hit = false;
  bool captured = false;  // a registration in this run
  std::string template_hash;
  double seconds = 0;
};

// The run's report from its edits: a cache hit only when a template registered before this run
// was reused (a run that captured one and then replayed it says so in a note instead).
void summarize_edits(const std::vector<EditReport>& edits, RunResult& result);

struct SessionOutcome {
  int32_t status = FLASHPS_PLUGIN_ERROR;  // OK (finished), CANCELLED or ERROR
  std::string error;
  std::vector<sdk::Image> results;
  std::vector<std::string> notes;
  std::vector<EditReport> edits;
};

class FilterSession : public flashps_host_context {
 public:
  // `selection`: 1-channel of the image's size, or empty.
  FilterSession(const flashps_plugin_descriptor& descriptor, const PluginInfo& info, sdk::Image image,
                sdk::Image selection, ParameterValues values, SessionHooks hooks);
  ~FilterSession();
  FilterSession(const FilterSession&) = delete;
  FilterSession& operator=(const FilterSession&) = delete;

  SessionOutcome run();

  // For the suites (plugins/core/host_suites.cpp).
  enum class Phase { idle, prepare, parameters, start, advance, finish };
  Phase phase() const { return phase_; }
  const sdk::Image& source() const { return image_; }
  const sdk::Image& selection() const { return selection_; }
  bool expand_canvas(int left, int top, int right, int bottom);
  uint8_t* new_result(uint32_t width, uint32_t height);
  bool report_progress(const char* stage, int done, int total);
  bool aborted();
  void log(int level, const std::string& text);
  void set_error(const std::string& text) { error_ = text; }
  void note(const std::string& text) { outcome_.notes.push_back(text); }
  const ParameterValue* parameter(const char* key) const;
  flashps_editor* editor();
  const EngineFunctions* engine() const { return hooks_.engine; }
  void report_edit(const flashps_edit_stats& stats);
  void* allocate(size_t bytes);
  void release(void* memory);

 private:
  int32_t call(int32_t selector);

  const flashps_plugin_descriptor& descriptor_;
  const PluginInfo& info_;
  sdk::Image image_, selection_;
  ParameterValues values_;
  SessionHooks hooks_;
  void* instance_ = nullptr;  // the plugin's record->instance between calls
  Phase phase_ = Phase::idle;
  std::string error_;
  bool cancelled_ = false;
  SessionOutcome outcome_;
  int64_t memory_used_ = 0;
  std::map<void*, size_t> scratch_;
};

}  // namespace flashps::plugins

#endif
