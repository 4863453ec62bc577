// flashps/editor.h: editors — a pipeline over a model of any registered family (open from a
// folder, or over an open model), info, template registration and lookup, single edits. Every
// call on an editor holds its mutex (handles.h), so threads sharing one editor take turns.
#include <ATen/ATen.h>

#include <chrono>
#include <string>

#include "api/abi_layout.h"
#include "api/api_support.h"
#include "api/edit_request.h"
#include "api/handles.h"
#include "app/default_model.h"
#include "core/diagnostics/error.h"
#include "core/diagnostics/progress.h"
#include "flashps/flashps.h"
#include "api/model_loading.h"
#include "pipeline/inpaint_model.h"
#include "serve/device_profile.h"
#include "serve/device_selection.h"

flashps_editor::~flashps_editor() = default;

namespace {

using flashps::api::guarded;
using flashps::api::invalid;

// Reads params and checks stats' size; false after recording INVALID_ARGUMENT.
bool read_edit_params(const flashps_edit_params* given, const flashps_edit_stats* stats, const char* function,
                      flashps_edit_params& params) {
  params = flashps_edit_default_params();
  if (!flashps::api::read_params(given, flashps::api::kEditParamsV1Size, params, function, "flashps_edit_params"))
    return false;
  return !stats || flashps::api::check_output_size(stats->struct_size, flashps::api::kEditStatsV1Size, function,
                                                   "flashps_edit_stats");
}

flashps_status register_template(const char* function, flashps_editor* editor, const flashps_image* image,
                                 const flashps_image* mask, const flashps_edit_params* given, int capture_kv,
                                 int capture_hidden, flashps_edit_stats* stats) {
  if (!editor) return invalid(function, "editor is NULL");
  if (!image) return invalid(function, "image is NULL");
  if (!capture_kv && !capture_hidden)
    return invalid(function, "capture_kv and capture_hidden are both 0: nothing would be captured");
  flashps_edit_params params;
  if (!read_edit_params(given, stats, function, params)) return FLASHPS_INVALID_ARGUMENT;
  return guarded([&] {
    flashps::EditRequest request = flashps::api::to_request(params);
    request.image = flashps::api::to_image(*image, "template image");
    if (mask) request.mask = flashps::api::to_image(*mask, "template mask");
    std::lock_guard<std::mutex> lock(editor->mutex);
    const flashps::TemplateInfo info = editor->pipeline->register_template(request, capture_kv != 0, capture_hidden != 0);
    flashps::api::fill_stats(info.stats, info.bytes, stats);
  });
}

// A pipeline over `model` with the editor's store; the planner plans with this device's measured
// speeds when a profile is found ($FLASHPS_PROFILE or the default location), else with the
// pipeline's online estimate.
std::unique_ptr<flashps_editor> open_editor(const flashps_model& model, const flashps_editor_params& params) {
  auto handle = std::make_unique<flashps_editor>();
  handle->model = model.model;
  handle->pipeline = model.model->new_pipeline(flashps::api::capture_store_for(params.store, params.capture_dir));
  if (const std::string profile = flashps::serve::resolve_profile_path(""); !profile.empty())
    handle->pipeline->use_profile_speed(
        flashps::serve::device_speed_of(flashps::serve::read_device_profile(profile)));
  handle->device = model.device;
  handle->info = flashps::api::describe_model(*handle->model, handle->device);
  return handle;
}

}  // namespace

extern "C" {

flashps_editor_params flashps_editor_default_params(void) {
  flashps_editor_params params{};
  params.struct_size = sizeof(params);
  params.threads = 0;
  params.bf16 = 0;
  params.capture_dir = nullptr;
  params.device = nullptr;
  params.store = nullptr;
  params.progress = nullptr;
  params.user_data = nullptr;
  return params;
}

flashps_edit_params flashps_edit_default_params(void) {
  flashps_edit_params params{};
  params.struct_size = sizeof(params);
  params.seed = 0;
  params.steps = 0;
  params.strength = 1.0f;
  params.guidance_scale = -1.0f;
  params.mask_grow_pixels = 0;
  params.mask_feather_pixels = 0;
  params.token_dilation = 0;
  params.cache_mode = FLASHPS_CACHE_AUTO;
  params.prompt_embeds_path = nullptr;
  params.progress = nullptr;
  params.user_data = nullptr;
  params.texture_transfer = -1;
  params.prompt = nullptr;
  params.negative_prompt = nullptr;
  params.context_size = 0;
  params.max_sequence_length = 0;
  return params;
}

const char* flashps_default_model_dir(void) {
  try {
    return flashps::app::default_model().dir.c_str();
  } catch (const std::exception& error) {
    // No model could be found or written: "" (flashps_editor_open(NULL, ...) reports why).
    flashps::api::fail(FLASHPS_ERROR, "flashps_default_model_dir", error.what());
    return "";
  }
}

flashps_status flashps_editor_open(const char* model_dir, const flashps_editor_params* given,
                                   flashps_editor** editor) {
  const char* const function = "flashps_editor_open";
  if (!editor) return invalid(function, "editor (the output) is NULL");
  *editor = nullptr;
  flashps_editor_params params = flashps_editor_default_params();
  if (!flashps::api::read_params(given, flashps::api::kEditorParamsV1Size, params, function, "flashps_editor_params"))
    return FLASHPS_INVALID_ARGUMENT;
  if (model_dir && !*model_dir) return invalid(function, "model_dir is \"\": give a folder, or NULL for the default");
  return guarded([&] {
    flashps_model_params model_params = flashps_model_default_params();
    model_params.bf16 = params.bf16;
    model_params.device = params.device;
    model_params.progress = params.progress;
    model_params.user_data = params.user_data;
    const std::unique_ptr<flashps_model> model = flashps::api::open_model(model_dir, model_params);
    *editor = open_editor(*model, params).release();
  });
}

flashps_status flashps_editor_open_model(flashps_model* model, const flashps_editor_params* given,
                                         flashps_editor** editor) {
  const char* const function = "flashps_editor_open_model";
  if (!editor) return invalid(function, "editor (the output) is NULL");
  *editor = nullptr;
  if (!model) return invalid(function, "model is NULL");
  flashps_editor_params params = flashps_editor_default_params();
  if (!flashps::api::read_params(given, flashps::api::kEditorParamsV1Size, params, function, "flashps_editor_params"))
    return FLASHPS_INVALID_ARGUMENT;
  return guarded([&] {
    flashps::api::check_same_weights(*model, params.bf16, params.device, "flashps_editor_params");
    *editor = open_editor(*model, params).release();
  });
}

void flashps_editor_close(flashps_editor* editor) {
  if (!editor) return;
  { std::lock_guard<std::mutex> wait_for_running_call(editor->mutex); }
  delete editor;
}

flashps_status flashps_editor_info(const flashps_editor* editor, flashps_model_info* info) {
  const char* const function = "flashps_editor_info";
  if (!editor) return invalid(function, "editor is NULL");
  if (!info) return invalid(function, "info (the output) is NULL");
  if (!flashps::api::check_output_size(info->struct_size, flashps::api::kModelInfoV2Size, function,
                                       "flashps_model_info"))
    return FLASHPS_INVALID_ARGUMENT;
  return guarded([&] {
    // Set at open and never changed: read without the editor's lock, so info does not wait for an edit.
    flashps::api::write_output(info, editor->info);
  });
}

flashps_status flashps_template_register(flashps_editor* editor, const flashps_image* image,
                                         const flashps_edit_params* params, flashps_edit_stats* stats) {
  return register_template("flashps_template_register", editor, image, nullptr, params, 1, 1, stats);
}

flashps_status flashps_template_register_masked(flashps_editor* editor, const flashps_image* image,
                                                const flashps_image* mask, const flashps_edit_params* params,
                                                int capture_kv, int capture_hidden, flashps_edit_stats* stats) {
  const char* const function = "flashps_template_register_masked";
  if (!mask) return invalid(function, "mask is NULL (flashps_template_register registers without one)");
  return register_template(function, editor, image, mask, params, capture_kv, capture_hidden, stats);
}

flashps_status flashps_template_lookup(flashps_editor* editor, const flashps_image* image, const flashps_image* mask,
                                       const flashps_edit_params* given, int* found) {
  const char* const function = "flashps_template_lookup";
  if (!editor) return invalid(function, "editor is NULL");
  if (!image) return invalid(function, "image is NULL");
  if (!mask) return invalid(function, "mask is NULL");
  if (!found) return invalid(function, "found (the output) is NULL");
  *found = 0;
  flashps_edit_params params;
  if (!read_edit_params(given, nullptr, function, params)) return FLASHPS_INVALID_ARGUMENT;
  return guarded([&] {
    flashps::EditRequest request = flashps::api::to_request(params);
    request.image = flashps::api::to_image(*image, "image");
    request.mask = flashps::api::to_image(*mask, "mask");
    flashps::check_request_for(*editor->model, request);
    std::lock_guard<std::mutex> lock(editor->mutex);
    const bool registered = editor->pipeline->has_template(request);
    *found = registered ? 1 : 0;
  });
}

flashps_status flashps_edit(flashps_editor* editor, const flashps_image* image, const flashps_image* mask,
                            const flashps_edit_params* given, flashps_image* result, flashps_edit_stats* stats) {
  const char* const function = "flashps_edit";
  if (!editor) return invalid(function, "editor is NULL");
  if (!image) return invalid(function, "image is NULL");
  if (!mask) return invalid(function, "mask is NULL");
  if (!result) return invalid(function, "result (the output) is NULL");
  flashps_edit_params params;
  if (!read_edit_params(given, stats, function, params)) return FLASHPS_INVALID_ARGUMENT;
  return guarded([&] {
    flashps::EditRequest request = flashps::api::to_request(params);
    request.image = flashps::api::to_image(*image, "image");
    request.mask = flashps::api::to_image(*mask, "mask");
    flashps::check_request_for(*editor->model, request);
    flashps::EditResult edited;
    {
      std::lock_guard<std::mutex> lock(editor->mutex);
      edited = editor->pipeline->edit(request);
    }
    flashps::api::fill_stats(edited.stats, edited.stats.cache_bytes_loaded, stats);
    flashps::api::to_c_image(edited.image, result);
  });
}

}  // extern "C"
