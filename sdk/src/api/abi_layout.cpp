// Freezes the C API's published struct layouts (x86-64 System V): a field moved, resized or
// inserted anywhere but at a struct's end breaks every program built against an older header,
// and fails the build here instead. Appending a field is allowed: update the sizeof line (and,
// for a struct's first growth, its first-layout constant in abi_layout.h).
#include "api/abi_layout.h"

#include <cstdint>

namespace flashps::api {

#if defined(__x86_64__) && defined(__LP64__)

// ---- flashps_image (API 1; no struct_size: it never grows) ----
static_assert(offsetof(flashps_image, width) == 0);
static_assert(offsetof(flashps_image, height) == 4);
static_assert(offsetof(flashps_image, channels) == 8);
static_assert(offsetof(flashps_image, pixels) == 16);
static_assert(sizeof(flashps_image) == 24);

// ---- flashps_editor_params: API 1 up to `device` ----
static_assert(offsetof(flashps_editor_params, struct_size) == 0);
static_assert(offsetof(flashps_editor_params, threads) == 8);
static_assert(offsetof(flashps_editor_params, bf16) == 12);
static_assert(offsetof(flashps_editor_params, capture_dir) == 16);
static_assert(offsetof(flashps_editor_params, device) == 24);
static_assert(kEditorParamsV1Size == 32);
static_assert(offsetof(flashps_editor_params, store) == 32);  // API 2
static_assert(offsetof(flashps_editor_params, progress) == 40);
static_assert(offsetof(flashps_editor_params, user_data) == 48);
static_assert(sizeof(flashps_editor_params) == 56);

// ---- flashps_edit_params: API 1 up to `texture_transfer` ----
static_assert(offsetof(flashps_edit_params, struct_size) == 0);
static_assert(offsetof(flashps_edit_params, seed) == 8);
static_assert(offsetof(flashps_edit_params, steps) == 16);
static_assert(offsetof(flashps_edit_params, strength) == 20);
static_assert(offsetof(flashps_edit_params, guidance_scale) == 24);
static_assert(offsetof(flashps_edit_params, mask_grow_pixels) == 28);
static_assert(offsetof(flashps_edit_params, mask_feather_pixels) == 32);
static_assert(offsetof(flashps_edit_params, token_dilation) == 36);
static_assert(offsetof(flashps_edit_params, cache_mode) == 40);
static_assert(offsetof(flashps_edit_params, prompt_embeds_path) == 48);
static_assert(offsetof(flashps_edit_params, progress) == 56);
static_assert(offsetof(flashps_edit_params, user_data) == 64);
static_assert(offsetof(flashps_edit_params, texture_transfer) == 72);
static_assert(kEditParamsV1Size == 80);
static_assert(offsetof(flashps_edit_params, prompt) == 80);  // API 2
static_assert(offsetof(flashps_edit_params, negative_prompt) == 88);
static_assert(offsetof(flashps_edit_params, context_size) == 96);
static_assert(offsetof(flashps_edit_params, max_sequence_length) == 104);  // API 4
static_assert(sizeof(flashps_edit_params) == 112);

// ---- flashps_edit_stats: API 1 up to `cache_bytes` ----
static_assert(offsetof(flashps_edit_stats, struct_size) == 0);
static_assert(offsetof(flashps_edit_stats, total_seconds) == 8);
static_assert(offsetof(flashps_edit_stats, denoise_seconds) == 16);
static_assert(offsetof(flashps_edit_stats, mask_ratio) == 24);
static_assert(offsetof(flashps_edit_stats, cache_hit) == 32);
static_assert(offsetof(flashps_edit_stats, mode_used) == 36);
static_assert(offsetof(flashps_edit_stats, steps_run) == 40);
static_assert(offsetof(flashps_edit_stats, cache_bytes) == 48);
static_assert(kEditStatsV1Size == 56);
static_assert(offsetof(flashps_edit_stats, encode_seconds) == 56);  // API 2
static_assert(offsetof(flashps_edit_stats, decode_seconds) == 64);
static_assert(offsetof(flashps_edit_stats, width) == 72);
static_assert(offsetof(flashps_edit_stats, height) == 76);
static_assert(offsetof(flashps_edit_stats, compute_saving) == 80);
static_assert(offsetof(flashps_edit_stats, blocks_from_cache) == 88);
static_assert(offsetof(flashps_edit_stats, blocks_computed) == 92);
static_assert(offsetof(flashps_edit_stats, entries_failed) == 96);
static_assert(offsetof(flashps_edit_stats, notes) == 104);
static_assert(offsetof(flashps_edit_stats, note_count) == 112);
static_assert(offsetof(flashps_edit_stats, template_hash) == 120);
static_assert(offsetof(flashps_edit_stats, prompt_cache_hit) == 128);  // API 4
static_assert(sizeof(flashps_edit_stats) == 136);

// ---- flashps_server_params: API 3 up to `user_data` ----
static_assert(offsetof(flashps_server_params, listen) == 8);
static_assert(offsetof(flashps_server_params, keep_results_seconds) == 64);
static_assert(offsetof(flashps_server_params, user_data) == 96);
static_assert(kServerParamsV3Size == 104);
static_assert(offsetof(flashps_server_params, listen_fd) == 104);  // API 7
static_assert(sizeof(flashps_server_params) == 112);

// ---- structs new in API 2: their whole size is their first layout ----
static_assert(kRuntimeOptionsV2Size == 40);
static_assert(kModelInfoV2Size == 72);
static_assert(offsetof(flashps_model_info, family_name) == 72);  // API 6
static_assert(sizeof(flashps_model_info) == 80);
static_assert(kStoreParamsV2Size == 32);
static_assert(kCaptureInfoV2Size == 72);
static_assert(kStoreStatsV2Size == 96);
static_assert(kVerifyReportV2Size == 32);
static_assert(kGcReportV2Size == 32);
static_assert(kEngineParamsV2Size == 96);
static_assert(offsetof(flashps_engine_params, compute_nice) == 96);  // API 5
static_assert(sizeof(flashps_engine_params) == 104);
static_assert(kEventV2Size == 64);
static_assert(kSubmitParamsV2Size == 40);
static_assert(kEngineCountersV2Size == 64);
static_assert(kBatchParamsV2Size == 56);
static_assert(kBatchSummaryV2Size == 56);
static_assert(kBrushV2Size == 40);
static_assert(sizeof(flashps_rect) == 16);  // passed by value: never grows

// ---- structs new in API 3 ----
static_assert(kServerParamsV3Size == 104);
// API-3 callers pass 72: template_captures (API 8) took the old layout's tail padding.
static_assert(kServerStatsV3Size == 68);
static_assert(sizeof(flashps_server_stats) == 72);

// ---- structs new in API 6 ----
static_assert(kModelParamsV6Size == 40);
static_assert(offsetof(flashps_model_params, vae_path) == 40);  // API 8
static_assert(offsetof(flashps_model_params, tokenizers_dir) == 72);
static_assert(sizeof(flashps_model_params) == 80);

// Enums are int-sized in both C and C++ (the structs above hold them).
static_assert(sizeof(flashps_status) == 4 && sizeof(flashps_cache_mode) == 4 && sizeof(flashps_log_level) == 4);

#endif

}  // namespace flashps::api
