#include "api/edit_params_check.h"

#include <filesystem>
#include <string>

#include "api/c_enum.h"
#include "core/diagnostics/error.h"
#include "pipeline/edit_rules.h"

namespace flashps::api {

using engine::CacheMode;

// The public bounds (flashps/editor.h, for front ends' help text) are the rules' own.
static_assert(FLASHPS_MAX_STEPS == rules::kMaxSteps);
static_assert(FLASHPS_MAX_GUIDANCE_SCALE == rules::kMaxGuidanceScale);
static_assert(FLASHPS_MAX_MASK_PIXELS == rules::kMaxMaskPixels);
static_assert(FLASHPS_MAX_TOKEN_DILATION == rules::kMaxTokenDilation);
static_assert(FLASHPS_MAX_CONTEXT_SIZE == rules::kMaxContextSize);
static_assert(FLASHPS_MAX_SEQUENCE_LENGTH == rules::kMaxSequenceLength);

CacheMode to_mode(const flashps_cache_mode& mode) {
  const int value = c_enum_value(mode);
  switch (value) {
    case FLASHPS_CACHE_AUTO: return CacheMode::automatic;
    case FLASHPS_CACHE_FULL: return CacheMode::full;
    case FLASHPS_CACHE_KV: return CacheMode::kv;
    case FLASHPS_CACHE_HIDDEN: return CacheMode::hidden;
  }
  throw InvalidArgumentError("flashps_edit_params.cache_mode is " + std::to_string(value) +
                             "; it must be FLASHPS_CACHE_AUTO (0), _FULL (1), _KV (2) or _HIDDEN (3)");
}

void check_params(const flashps_edit_params& params) {
  rules::EditSettings settings;
  settings.steps = params.steps;
  settings.strength = params.strength;
  settings.guidance_scale = params.guidance_scale;
  settings.mask_grow_pixels = params.mask_grow_pixels;
  settings.mask_feather_pixels = params.mask_feather_pixels;
  settings.token_dilation = params.token_dilation;
  settings.context_size = params.context_size;
  settings.max_sequence_length = params.max_sequence_length;
  settings.texture_transfer = params.texture_transfer;
  rules::check_edit_settings(settings, [](const std::string& field) { return "flashps_edit_params." + field; });
  to_mode(params.cache_mode);
  if (params.prompt_embeds_path && !std::filesystem::exists(params.prompt_embeds_path))
    throw NotFoundError(std::string(params.prompt_embeds_path) +
                        ": prompt embeddings file (flashps_edit_params.prompt_embeds_path) does not exist");
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

}  // namespace flashps::api
