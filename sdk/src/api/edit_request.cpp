#include "api/edit_request.h"

#include <cstddef>

#include "api/api_support.h"
#include "core/diagnostics/error.h"
#include "core/image/image.h"

namespace flashps::api {

EditRequest to_request(const flashps_edit_params& params) {
  check_params(params);
  EditRequest request;
  request.seed = params.seed;
  request.steps = params.steps;
  request.strength = params.strength;
  if (params.guidance_scale >= 0) request.guidance_scale = params.guidance_scale;
  request.mask_grow_pixels = params.mask_grow_pixels;
  request.mask_feather_pixels = params.mask_feather_pixels;
  request.token_dilation = params.token_dilation;
  request.mode = to_mode(params.cache_mode);
  if (params.texture_transfer >= 0) request.texture_transfer = params.texture_transfer == 1;
  if (params.prompt) request.prompt = params.prompt;
  if (params.negative_prompt) request.negative_prompt = params.negative_prompt;
  request.context_size = params.context_size;
  request.max_sequence_length = static_cast<int>(params.max_sequence_length);
  if (params.prompt_embeds_path) request.conditioning = load_conditioning(params.prompt_embeds_path);
  if (params.progress) {
    const flashps_progress_callback callback = params.progress;
    void* const user_data = params.user_data;
    request.progress = [callback, user_data](const ProgressEvent& event) {
      return callback(event.stage.c_str(), event.step, event.total_steps, event.stage_seconds, user_data) != 0;
    };
  }
  return request;
}

void fill_stats(const EditStats& stats, int64_t cache_bytes, flashps_edit_stats* out, StatsStrings strings) {
  if (!out) return;
  flashps_edit_stats result{};
  result.total_seconds = stats.total_seconds;
  result.denoise_seconds = stats.denoise_seconds;
  result.mask_ratio = stats.mask_ratio;
  result.cache_hit = stats.cache_hit ? 1 : 0;
  result.mode_used = to_c_mode(stats.mode_used);
  result.steps_run = stats.steps_run;
  result.cache_bytes = cache_bytes;
  result.encode_seconds = stats.encode_seconds;
  result.decode_seconds = stats.decode_seconds;
  result.width = stats.width;
  result.height = stats.height;
  result.compute_saving = stats.compute_saving;
  result.blocks_from_cache = stats.blocks_from_cache;
  result.blocks_computed = stats.blocks_computed;
  result.entries_failed = stats.entries_failed;
  result.note_count = static_cast<int>(stats.notes.size());
  result.prompt_cache_hit = stats.prompt_cache_hit ? 1 : 0;
  // Only a caller whose struct has the field gets (and owns the lifetime of) the string.
  if (out->struct_size >= offsetof(flashps_edit_stats, notes) + sizeof(result.notes)) {
    result.notes = strings.notes_joined ? strings.notes_joined->c_str()
                                        : thread_string(kNotesSlot, join_lines(stats.notes));
  }
  if (out->struct_size >= offsetof(flashps_edit_stats, template_hash) + sizeof(result.template_hash)) {
    result.template_hash = strings.template_hash ? strings.template_hash->c_str()
                                                 : thread_string(kTemplateHashSlot, stats.template_hash);
  }
  write_output(out, result);
}

}  // namespace flashps::api
