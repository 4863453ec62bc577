#include "api/edit_request.h"

#include <cmath>
#include <cstddef>
#include <filesystem>

#include "api/api_support.h"
#include "core/error.h"
#include "core/image.h"

namespace flashps::api {
namespace {

void require(bool ok, const std::string& field, const std::string& value, const char* allowed) {
  if (!ok) throw InvalidArgumentError("flashps_edit_params." + field + " is " + value + "; it must be " + allowed);
}

CacheMode to_mode(flashps_cache_mode mode) {
  switch (mode) {
    case FLASHPS_CACHE_AUTO: return CacheMode::automatic;
    case FLASHPS_CACHE_FULL: return CacheMode::full;
    case FLASHPS_CACHE_KV: return CacheMode::kv;
    case FLASHPS_CACHE_HIDDEN: return CacheMode::hidden;
  }
  throw InvalidArgumentError("flashps_edit_params.cache_mode is " + std::to_string(static_cast<int>(mode)) +
                             "; it must be FLASHPS_CACHE_AUTO (0), _FULL (1), _KV (2) or _HIDDEN (3)");
}

}  // namespace

EditRequest to_request(const flashps_edit_params& params) {
  EditRequest request;
  require(params.steps >= 0 && params.steps <= 1000, "steps", std::to_string(params.steps),
          "0 (the model's recommendation) to 1000");
  require(params.strength > 0 && params.strength <= 1, "strength", std::to_string(params.strength), "in (0, 1]");
  require(std::isfinite(params.guidance_scale), "guidance_scale", std::to_string(params.guidance_scale),
          "a finite number (< 0: the model's default)");
  // Upper bounds: no image is larger (kMaxImageSide pixels, a sixteenth of that in tokens), and a
  // huge value would only make the mask operations slow.
  require(params.mask_grow_pixels >= 0 && params.mask_grow_pixels <= kMaxImageSide, "mask_grow_pixels",
          std::to_string(params.mask_grow_pixels), "0 to 16384");
  require(params.mask_feather_pixels >= 0 && params.mask_feather_pixels <= kMaxImageSide, "mask_feather_pixels",
          std::to_string(params.mask_feather_pixels), "0 to 16384");
  require(params.token_dilation >= 0 && params.token_dilation <= kMaxImageSide / 16, "token_dilation",
          std::to_string(params.token_dilation), "0 to 1024");
  require(params.max_sequence_length >= 0 && params.max_sequence_length <= 512, "max_sequence_length",
          std::to_string(params.max_sequence_length), "0 (the model's default) to 512");
  require(params.texture_transfer >= -1 && params.texture_transfer <= 1, "texture_transfer",
          std::to_string(params.texture_transfer), "-1 (the model's choice), 0 (off) or 1 (on)");
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
  if (params.prompt_embeds_path) {
    if (!std::filesystem::exists(params.prompt_embeds_path))
      throw NotFoundError(std::string(params.prompt_embeds_path) +
                          ": prompt embeddings file (flashps_edit_params.prompt_embeds_path) does not exist");
    request.conditioning = load_conditioning(params.prompt_embeds_path);
  }
  if (params.progress) {
    const flashps_progress_callback callback = params.progress;
    void* const user_data = params.user_data;
    request.progress = [callback, user_data](const ProgressEvent& event) {
      return callback(event.stage.c_str(), event.step, event.total_steps, event.stage_seconds, user_data) != 0;
    };
  }
  return request;
}

flashps_cache_mode to_c_mode(CacheMode mode) {
  switch (mode) {
    case CacheMode::kv: return FLASHPS_CACHE_KV;
    case CacheMode::hidden: return FLASHPS_CACHE_HIDDEN;
    case CacheMode::full: return FLASHPS_CACHE_FULL;
    case CacheMode::automatic: return FLASHPS_CACHE_AUTO;
  }
  return FLASHPS_CACHE_AUTO;
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
