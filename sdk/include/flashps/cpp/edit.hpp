// FlashPS C++ wrapper, part of <flashps/flashps.hpp> (include that).
// What an edit takes and returns (options, stats, notes, result) and what a model is (family,
// native size).
#ifndef FLASHPS_CPP_EDIT_HPP
#define FLASHPS_CPP_EDIT_HPP

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flashps/cpp/common.hpp"

namespace flashps::sdk {

enum class CacheMode { automatic = FLASHPS_CACHE_AUTO, full = FLASHPS_CACHE_FULL, kv = FLASHPS_CACHE_KV, hidden = FLASHPS_CACHE_HIDDEN };

// "auto", "full", "kv", "hidden" (the CLI's --cache, manifests' and HTTP's "cache").
inline const char* cache_mode_name(CacheMode mode) {
  const char* name = flashps_cache_mode_name(static_cast<flashps_cache_mode>(mode));
  return name ? name : "?";
}
// Error(FLASHPS_INVALID_ARGUMENT) naming the choices for another name.
inline CacheMode cache_mode_from_name(const std::string& name) {
  flashps_cache_mode mode = FLASHPS_CACHE_AUTO;
  check(flashps_cache_mode_from_name(name.c_str(), &mode));
  return static_cast<CacheMode>(mode);
}

struct EditOptions {
  uint64_t seed = 0;
  int steps = 0;  // 0: the model's recommendation
  float strength = 1.0f;
  std::optional<float> guidance_scale;  // empty: the model's default
  int mask_grow_pixels = 0, mask_feather_pixels = 0, token_dilation = 0;
  CacheMode cache_mode = CacheMode::automatic;
  std::string prompt, negative_prompt;
  std::string prompt_embeds_path;  // Flux: safetensors with prompt_embeds / pooled_prompt_embeds
  std::optional<bool> texture_transfer;  // empty: as the model recommends
  int context_size = 0;  // 0: the model's native size; < 0: always the whole image
  int max_sequence_length = 0;  // Flux with text encoders: T5 tokens (1..512); 0: the model's default
  ProgressFunction progress;

  // The C struct; pointers refer into this object (keep it alive during the call).
  flashps_edit_params to_c() const {
    flashps_edit_params params = flashps_edit_default_params();
    params.seed = seed;
    params.steps = steps;
    params.strength = strength;
    params.guidance_scale = guidance_scale ? *guidance_scale : -1.0f;
    params.mask_grow_pixels = mask_grow_pixels;
    params.mask_feather_pixels = mask_feather_pixels;
    params.token_dilation = token_dilation;
    params.cache_mode = static_cast<flashps_cache_mode>(cache_mode);
    params.prompt_embeds_path = detail::c_str_or_null(prompt_embeds_path);
    params.texture_transfer = texture_transfer ? (*texture_transfer ? 1 : 0) : -1;
    params.prompt = detail::c_str_or_null(prompt);
    params.negative_prompt = detail::c_str_or_null(negative_prompt);
    params.context_size = context_size;
    params.max_sequence_length = max_sequence_length;
    if (progress) {
      params.progress = detail::progress_trampoline;
      params.user_data = const_cast<ProgressFunction*>(&progress);
    }
    return params;
  }

  // The SDK's rules for every setting, before a model is loaded (flashps_edit_params_check):
  // Error(FLASHPS_INVALID_ARGUMENT) naming the field ("flashps_edit_params.steps is 1001; ...").
  void check() const {
    const flashps_edit_params params = to_c();
    sdk::check(flashps_edit_params_check(&params));
  }
};

struct EditStats {
  double total_seconds = 0, encode_seconds = 0, denoise_seconds = 0, decode_seconds = 0;
  double mask_ratio = 0;
  bool cache_hit = false;
  CacheMode mode_used = CacheMode::full;
  int steps_run = 0;
  int64_t cache_bytes = 0;  // read from a capture, or captured by a registration
  int width = 0, height = 0;
  double compute_saving = 1;
  int blocks_from_cache = 0, blocks_computed = 0, entries_failed = 0;
  std::vector<std::string> notes;
  std::string template_hash;  // registered or reused capture; empty when none
  bool prompt_cache_hit = false;  // the prompt's embeddings came from the store: no text encoder ran

  static flashps_edit_stats empty_c() {
    flashps_edit_stats stats{};
    stats.struct_size = sizeof(stats);
    return stats;
  }
  static EditStats from_c(const flashps_edit_stats& c) {
    EditStats stats;
    stats.total_seconds = c.total_seconds;
    stats.encode_seconds = c.encode_seconds;
    stats.denoise_seconds = c.denoise_seconds;
    stats.decode_seconds = c.decode_seconds;
    stats.mask_ratio = c.mask_ratio;
    stats.cache_hit = c.cache_hit != 0;
    stats.mode_used = static_cast<CacheMode>(c.mode_used);
    stats.steps_run = c.steps_run;
    stats.cache_bytes = c.cache_bytes;
    stats.width = c.width;
    stats.height = c.height;
    stats.compute_saving = c.compute_saving;
    stats.blocks_from_cache = c.blocks_from_cache;
    stats.blocks_computed = c.blocks_computed;
    stats.entries_failed = c.entries_failed;
    stats.notes = detail::split_lines(c.notes);
    if (c.template_hash) stats.template_hash = c.template_hash;
    stats.prompt_cache_hit = c.prompt_cache_hit != 0;
    return stats;
  }
};

struct EditResult {
  Image image;
  EditStats stats;
};

// `other`: a family an embedding program registered; ModelInfo::family_name names it.
enum class ModelFamily {
  other = FLASHPS_FAMILY_OTHER,
  flux = FLASHPS_FAMILY_FLUX,
  stable_diffusion = FLASHPS_FAMILY_STABLE_DIFFUSION
};

struct ModelInfo {
  ModelFamily family = ModelFamily::flux;
  std::string family_name;  // the registry's name: "flux", "stable-diffusion", ...
  std::string model_dir, fingerprint, device;
  int native_size = 0, default_steps = 0;
  bool takes_text = false, is_fill = false, unconditional = false, recommends_texture_transfer = false, bf16 = false;

  static ModelInfo from_c(const flashps_model_info& c) {
    ModelInfo info;
    info.family = static_cast<ModelFamily>(c.family);
    info.family_name = c.struct_size > offsetof(flashps_model_info, family_name) && c.family_name ? c.family_name : "";
    info.model_dir = c.model_dir ? c.model_dir : "";
    info.fingerprint = c.fingerprint ? c.fingerprint : "";
    info.device = c.device ? c.device : "";
    info.native_size = c.native_size;
    info.default_steps = c.default_steps;
    info.takes_text = c.takes_text != 0;
    info.is_fill = c.is_fill != 0;
    info.unconditional = c.unconditional != 0;
    info.recommends_texture_transfer = c.recommends_texture_transfer != 0;
    info.bf16 = c.bf16 != 0;
    return info;
  }
};

// The folder Editor::open("") loads: $FLASHPS_MODEL, the bundled model, or a random stand-in.
inline std::string default_model_dir() {
  const char* dir = flashps_default_model_dir();
  if (!dir) throw Error(FLASHPS_ERROR, flashps_last_error());
  return dir;
}

}  // namespace flashps::sdk

#endif  // FLASHPS_CPP_EDIT_HPP
