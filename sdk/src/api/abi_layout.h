// The first published layout of every size-prefixed struct of the C API: the smallest
// struct_size the library accepts (api_support.h read_params / check_output_size). Internal.
//
// Structs of API 1 grew in API 2: their first layout ends where the first API-2 field begins.
// Structs new in API 2 have one layout so far, their whole size. When a field is added to one of
// those, abi_layout.cpp's sizeof check fails: set its constant here to the offset of the new
// field (the struct's first layout stays what callers built against API 2 pass).
#pragma once
#include <cstddef>

#include "flashps/flashps.h"

namespace flashps::api {

// ---- API 1 structs, grown in API 2 ----
constexpr size_t kEditorParamsV1Size = offsetof(flashps_editor_params, store);
constexpr size_t kEditParamsV1Size = offsetof(flashps_edit_params, prompt);
constexpr size_t kEditStatsV1Size = offsetof(flashps_edit_stats, encode_seconds);

// ---- structs new in API 2 (common.h, editor.h, store.h, engine.h, mask.h) ----
constexpr size_t kRuntimeOptionsV2Size = sizeof(flashps_runtime_options);
constexpr size_t kModelInfoV2Size = offsetof(flashps_model_info, family_name);
constexpr size_t kStoreParamsV2Size = sizeof(flashps_store_params);
constexpr size_t kCaptureInfoV2Size = sizeof(flashps_capture_info);
constexpr size_t kStoreStatsV2Size = sizeof(flashps_store_stats);
constexpr size_t kVerifyReportV2Size = sizeof(flashps_verify_report);
constexpr size_t kGcReportV2Size = sizeof(flashps_gc_report);
constexpr size_t kEngineParamsV2Size = offsetof(flashps_engine_params, compute_nice);
constexpr size_t kEventV2Size = sizeof(flashps_event);
constexpr size_t kSubmitParamsV2Size = sizeof(flashps_submit_params);
constexpr size_t kEngineCountersV2Size = sizeof(flashps_engine_counters);
constexpr size_t kBatchParamsV2Size = sizeof(flashps_batch_params);
constexpr size_t kBatchSummaryV2Size = sizeof(flashps_batch_summary);
constexpr size_t kBrushV2Size = sizeof(flashps_brush);

// ---- structs new in API 3 (server.h), flashps_server_params grown in API 7, flashps_server_stats in API 8 ----
constexpr size_t kServerParamsV3Size = offsetof(flashps_server_params, listen_fd);
constexpr size_t kServerStatsV3Size = offsetof(flashps_server_stats, template_captures);

// ---- structs new in API 6 (model.h), flashps_model_params grown in API 8 ----
constexpr size_t kModelParamsV6Size = offsetof(flashps_model_params, vae_path);

}  // namespace flashps::api
