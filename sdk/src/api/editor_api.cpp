// flashps/editor.h: editors over the Flux and Stable Diffusion pipelines — open (any supported
// folder, or the default model), info, template registration and lookup, single edits. Every
// call on an editor holds its mutex (handles.h), so threads sharing one editor take turns.
#include <ATen/ATen.h>

#include <chrono>
#include <string>

#include "api/abi_layout.h"
#include "api/api_support.h"
#include "api/edit_request.h"
#include "api/handles.h"
#include "app/default_model.h"
#include "core/error.h"
#include "core/progress.h"
#include "flashps/flashps.h"
#include "pipeline/flux_inpaint_pipeline.h"
#include "pipeline/model_family.h"
#include "pipeline/sd_inpaint_pipeline.h"
#include "serve/device_profile.h"
#include "serve/device_selection.h"

flashps_editor::~flashps_editor() = default;

namespace {

using flashps::api::guarded;
using flashps::api::invalid;

// Reports loading progress as stage "load": step 0 of 1 when it starts, 1 of 1 when the model is
// in memory; a callback returning 0 at either point cancels the open.
class LoadProgress {
 public:
  LoadProgress(flashps_progress_callback callback, void* user_data) : callback_(callback), user_data_(user_data) {}
  void report(int step) const {
    if (!callback_) return;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (callback_("load", step, 1, seconds, user_data_) == 0) throw flashps::Cancelled();
  }

 private:
  flashps_progress_callback callback_;
  void* user_data_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// What only Stable Diffusion refuses, checked before the (locked) model work starts.
void check_request_for(const flashps_editor& editor, const flashps::EditRequest& request) {
  if (editor.sd && request.mode == flashps::CacheMode::kv)
    throw flashps::UnsupportedError(editor.model_dir +
                                    ": FLASHPS_CACHE_KV does not apply to Stable Diffusion (UNet) models: their "
                                    "ResNets are dense, so only block outputs are reused; use FLASHPS_CACHE_HIDDEN "
                                    "or FLASHPS_CACHE_AUTO");
}

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
    flashps::TemplateInfo info;
    if (editor->flux) {
      info = editor->flux->register_template(request, capture_kv != 0, capture_hidden != 0);
    } else {
      // UNets keep block outputs ('hidden') only; asking for kv alone would capture nothing useful.
      if (!capture_hidden)
        throw flashps::UnsupportedError(editor->model_dir +
                                        ": Stable Diffusion (UNet) templates capture 'hidden' activations only; "
                                        "'kv' does not apply (set capture_hidden)");
      info = editor->sd->register_template(request);
    }
    flashps::api::fill_stats(info.stats, info.bytes, stats);
  });
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
    const LoadProgress progress(params.progress, params.user_data);
    progress.report(0);
    auto handle = std::make_unique<flashps_editor>();
    handle->model_dir = model_dir ? model_dir : flashps::app::default_model().dir;
    const flashps::ModelFamily family = flashps::detect_model_family(handle->model_dir);
    const at::Device device = params.device ? flashps::serve::select_device(params.device) : at::Device(at::kCPU);
    const at::ScalarType dtype = params.bf16 ? at::kBFloat16 : at::kFloat;
    std::shared_ptr<flashps::engine::CaptureStore> store =
        flashps::api::capture_store_for(params.store, params.capture_dir);
    if (family == flashps::ModelFamily::flux) {
      handle->family = FLASHPS_FAMILY_FLUX;
      handle->flux = flashps::FluxInpaintPipeline::load(handle->model_dir, dtype, std::move(store), device);
      handle->fingerprint = handle->flux->components().fingerprint;
    } else {
      handle->family = FLASHPS_FAMILY_STABLE_DIFFUSION;
      handle->sd = flashps::SDInpaintPipeline::load(handle->model_dir, dtype, std::move(store), device);
      handle->fingerprint = handle->sd->components().fingerprint;
    }
    // The planner plans with this device's measured speeds when a profile is found
    // ($FLASHPS_PROFILE or the default location), else with the pipeline's online estimate.
    if (const std::string profile = flashps::serve::resolve_profile_path(""); !profile.empty()) {
      const auto speed = flashps::serve::device_speed_of(flashps::serve::read_device_profile(profile));
      if (handle->flux) handle->flux->use_profile_speed(speed);
      if (handle->sd) handle->sd->use_profile_speed(speed);
    }
    handle->device = device.str();
    handle->bf16 = params.bf16 != 0;
    progress.report(1);
    *editor = handle.release();
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
    flashps_model_info result{};
    result.family = editor->family;
    result.model_dir = editor->model_dir.c_str();
    result.fingerprint = editor->fingerprint.c_str();
    result.device = editor->device.c_str();
    result.bf16 = editor->bf16 ? 1 : 0;
    if (editor->flux) {
      const flashps::FluxInpaintPipeline& flux = *editor->flux;
      result.native_size = flux.components().native_size;
      result.takes_text = flux.has_text_encoder() ? 1 : 0;
      result.default_steps = flux.recommended_steps();
      result.is_fill = flux.is_fill() ? 1 : 0;
      result.unconditional = flux.is_unconditional() ? 1 : 0;
      result.recommends_texture_transfer = flux.recommends_texture_transfer() ? 1 : 0;
    } else {
      const flashps::SDInpaintPipeline& sd = *editor->sd;
      result.native_size = 0;
      result.takes_text = 1;
      result.default_steps = sd.recommended_steps();
      result.is_fill = sd.is_inpainting_unet() ? 1 : 0;
      result.unconditional = 0;
      result.recommends_texture_transfer = 0;
    }
    flashps::api::write_output(info, result);
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
    check_request_for(*editor, request);
    std::lock_guard<std::mutex> lock(editor->mutex);
    const bool registered = editor->flux ? editor->flux->has_template(request) : editor->sd->has_template(request);
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
    check_request_for(*editor, request);
    flashps::EditResult edited;
    {
      std::lock_guard<std::mutex> lock(editor->mutex);
      edited = editor->flux ? editor->flux->edit(request) : editor->sd->edit(request);
    }
    flashps::api::fill_stats(edited.stats, edited.stats.cache_bytes_loaded, stats);
    flashps::api::to_c_image(edited.image, result);
  });
}

}  // extern "C"
