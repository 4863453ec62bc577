// flashps_edit_params <-> the SDK's EditRequest / EditStats, shared by the editor (editor_api.cpp)
// and the serving engine (engine_api.cpp) so both accept and report exactly the same things.
// Internal (not installed).
#pragma once
#include <cstdint>
#include <string>

#include "flashps/editor.h"
#include "pipeline/edit_types.h"

namespace flashps::api {

// Validates every field of `params` (already read with read_params, so struct_size is ours) and
// converts it: steps 0..1000 (0: the model's recommendation), strength in (0, 1], guidance_scale
// finite (< 0: the model's default), mask_grow_pixels / mask_feather_pixels 0..16384,
// token_dilation 0..1024, cache_mode one of flashps_cache_mode, texture_transfer -1/0/1,
// context_size any (0 native, < 0 whole image); prompt / negative_prompt NULL = "".
// prompt_embeds_path is loaded (NotFoundError when the file does not exist). params.progress,
// when set, becomes the request's progress callback (returning 0 cancels). Throws
// InvalidArgumentError naming the field, its value and the allowed range.
EditRequest to_request(const flashps_edit_params& params);

flashps_cache_mode to_c_mode(CacheMode mode);

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
