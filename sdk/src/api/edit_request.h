// flashps_edit_params <-> the SDK's EditRequest / EditStats, shared by the editor (editor_api.cpp)
// and the serving engine (engine_api.cpp) so both accept and report exactly the same things.
// Internal (not installed).
#pragma once
#include <cstdint>
#include <string>

#include "api/edit_params_check.h"
#include "flashps/editor.h"
#include "pipeline/edit_types.h"

namespace flashps::api {

// check_params (edit_params_check.h: every field by the one set of rules), then the conversion:
// prompt / negative_prompt NULL = "", prompt_embeds_path loaded, params.progress (when set) the
// request's progress callback (returning 0 cancels).
EditRequest to_request(const flashps_edit_params& params);

// Where flashps_edit_stats.notes and .template_hash point: the calling thread's strings (editor
// calls: valid "until the calling thread's next call that fills stats"), or strings the caller
// keeps alive and unchanged (engine results: until the request is freed); notes joined one per line.
struct StatsStrings {
  const std::string* notes_joined = nullptr;  // nullptr: the thread's notes slot
  const std::string* template_hash = nullptr;  // nullptr: the thread's template-hash slot
};

// Fills `out` (nullptr: nothing; else its struct_size was checked with check_output_size before
// the work started, so a bad size fails fast), writing only the caller's size. `cache_bytes`:
// bytes read from a capture, or captured by a registration.
void fill_stats(const EditStats& stats, int64_t cache_bytes, flashps_edit_stats* out, StatsStrings strings = {});

}  // namespace flashps::api
