// The C API (flashps/flashps.h): a thin, exception-free layer over the C++ pipeline.
#include "flashps/flashps.h"

#include <ATen/ATen.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "cache/activation_store.h"
#include "core/error.h"
#include "core/image.h"
#include "core/runtime.h"
#include "serve/device_selection.h"
#include "pipeline/flux_inpaint_pipeline.h"

struct flashps_editor {
  std::unique_ptr<flashps::FluxInpaintPipeline> pipeline;
};

namespace {

thread_local std::string last_error;

template <typename Body>
flashps_status guarded(Body body) {
  try {
    body();
    last_error.clear();
    return FLASHPS_OK;
  } catch (const flashps::Cancelled&) {
    last_error = "cancelled";
    return FLASHPS_CANCELLED;
  } catch (const std::exception& error) {
    last_error = error.what();
    return FLASHPS_ERROR;
  } catch (...) {
    last_error = "unknown error";
    return FLASHPS_ERROR;
  }
}

flashps_status invalid(const char* message) {
  last_error = message;
  return FLASHPS_INVALID_ARGUMENT;
}

// Struct versioning: accept any size from the first published layout up to ours; fields past
// the caller's size keep their defaults.
template <typename Params>
Params read_params(const Params* given, Params defaults) {
  if (!given) return defaults;
  std::memcpy(&defaults, given, std::min(given->struct_size, sizeof(Params)));
  defaults.struct_size = sizeof(Params);
  return defaults;
}

flashps::Image to_image(const flashps_image& image, const char* name) {
  if (!image.pixels) throw flashps::Error(std::string(name) + ": no pixels");
  flashps::Image result(static_cast<int>(image.width), static_cast<int>(image.height),
                        static_cast<int>(image.channels));
  flashps::check_image(result, name);
  std::memcpy(result.pixels.data(), image.pixels, result.pixels.size());
  return result;
}

void to_c_image(const flashps::Image& image, flashps_image* out) {
  out->width = static_cast<uint32_t>(image.width);
  out->height = static_cast<uint32_t>(image.height);
  out->channels = static_cast<uint32_t>(image.channels);
  out->pixels = static_cast<uint8_t*>(std::malloc(image.pixels.size()));
  if (!out->pixels) throw flashps::Error("out of memory for the result image");
  std::memcpy(out->pixels, image.pixels.data(), image.pixels.size());
}

flashps::EditRequest to_request(const flashps_edit_params& params) {
  flashps::EditRequest request;
  request.seed = params.seed;
  request.steps = params.steps;
  request.strength = params.strength;
  if (params.guidance_scale >= 0) request.guidance_scale = params.guidance_scale;
  request.mask_grow_pixels = params.mask_grow_pixels;
  request.mask_feather_pixels = params.mask_feather_pixels;
  request.token_dilation = params.token_dilation;
  switch (params.cache_mode) {
    case FLASHPS_CACHE_FULL: request.mode = flashps::ComputeMode::full; break;
    case FLASHPS_CACHE_KV: request.mode = flashps::ComputeMode::kv; break;
    case FLASHPS_CACHE_HIDDEN: request.mode = flashps::ComputeMode::hidden; break;
    default: request.mode = flashps::ComputeMode::automatic; break;
  }
  if (params.texture_transfer < -1 || params.texture_transfer > 1)
    throw flashps::Error("edit params: texture_transfer must be -1 (model's choice), 0 or 1, got " +
                         std::to_string(params.texture_transfer));
  if (params.texture_transfer >= 0) request.texture_transfer = params.texture_transfer == 1;
  if (params.prompt_embeds_path) request.conditioning = flashps::load_conditioning(params.prompt_embeds_path);
  if (params.progress) {
    auto callback = params.progress;
    void* user_data = params.user_data;
    request.progress = [callback, user_data](const flashps::ProgressEvent& event) {
      return callback(event.stage.c_str(), event.step, event.total_steps, event.stage_seconds, user_data) != 0;
    };
  }
  return request;
}

flashps_cache_mode to_c_mode(flashps::ComputeMode mode) {
  switch (mode) {
    case flashps::ComputeMode::kv: return FLASHPS_CACHE_KV;
    case flashps::ComputeMode::hidden: return FLASHPS_CACHE_HIDDEN;
    case flashps::ComputeMode::full: return FLASHPS_CACHE_FULL;
    default: return FLASHPS_CACHE_AUTO;
  }
}

void fill_stats(const flashps::EditStats& stats, int64_t bytes, flashps_edit_stats* out) {
  if (!out) return;
  flashps_edit_stats result{};
  result.struct_size = sizeof(flashps_edit_stats);
  result.total_seconds = stats.total_seconds;
  result.denoise_seconds = stats.denoise_seconds;
  result.mask_ratio = stats.mask_ratio;
  result.cache_hit = stats.cache_hit ? 1 : 0;
  result.mode_used = to_c_mode(stats.mode_used);
  result.steps_run = stats.steps_run;
  result.cache_bytes = bytes;
  std::memcpy(out, &result, std::min(out->struct_size, sizeof(result)));
}

}  // namespace

extern "C" {

int flashps_api_version(void) { return FLASHPS_API_VERSION; }
const char* flashps_last_error(void) { return last_error.c_str(); }

flashps_editor_params flashps_editor_default_params(void) {
  flashps_editor_params params{};
  params.struct_size = sizeof(params);
  return params;
}

flashps_edit_params flashps_edit_default_params(void) {
  flashps_edit_params params{};
  params.struct_size = sizeof(params);
  params.steps = 0;
  params.strength = 1.0f;
  params.guidance_scale = -1.0f;
  params.cache_mode = FLASHPS_CACHE_AUTO;
  params.texture_transfer = -1;
  return params;
}

flashps_status flashps_editor_open(const char* model_dir, const flashps_editor_params* given,
                                   flashps_editor** editor) {
  if (!model_dir || !editor) return invalid("flashps_editor_open: model_dir and editor must not be NULL");
  *editor = nullptr;
  const flashps_editor_params params = read_params(given, flashps_editor_default_params());
  return guarded([&] {
    flashps::RuntimeOptions runtime;
    runtime.num_threads = params.threads;
    flashps::init_runtime(runtime);
    std::shared_ptr<flashps::engine::CaptureStore> store;
    if (params.capture_dir) {
      flashps::cache::ActivationStoreOptions options;
      options.directory = params.capture_dir;
      store = flashps::cache::ActivationStore::open(options);
    }
    auto handle = std::make_unique<flashps_editor>();
    const at::Device device = params.device ? flashps::serve::select_device(params.device) : at::Device(at::kCPU);
    handle->pipeline =
        flashps::FluxInpaintPipeline::load(model_dir, params.bf16 ? at::kBFloat16 : at::kFloat, store, device);
    *editor = handle.release();
  });
}

void flashps_editor_close(flashps_editor* editor) { delete editor; }

flashps_status flashps_template_register(flashps_editor* editor, const flashps_image* image,
                                         const flashps_edit_params* given, flashps_edit_stats* stats) {
  if (!editor || !image) return invalid("flashps_template_register: editor and image must not be NULL");
  const flashps_edit_params params = read_params(given, flashps_edit_default_params());
  return guarded([&] {
    flashps::EditRequest request = to_request(params);
    request.image = to_image(*image, "template image");
    flashps::TemplateInfo info = editor->pipeline->register_template(request);
    fill_stats(info.stats, info.bytes, stats);
  });
}

flashps_status flashps_edit(flashps_editor* editor, const flashps_image* image, const flashps_image* mask,
                            const flashps_edit_params* given, flashps_image* result, flashps_edit_stats* stats) {
  if (!editor || !image || !mask || !result)
    return invalid("flashps_edit: editor, image, mask and result must not be NULL");
  const flashps_edit_params params = read_params(given, flashps_edit_default_params());
  return guarded([&] {
    flashps::EditRequest request = to_request(params);
    request.image = to_image(*image, "image");
    request.mask = to_image(*mask, "mask");
    flashps::EditResult edited = editor->pipeline->edit(request);
    to_c_image(edited.image, result);
    fill_stats(edited.stats, edited.stats.cache_bytes_loaded, stats);
  });
}

flashps_status flashps_image_load(const char* path, flashps_image* image) {
  if (!path || !image) return invalid("flashps_image_load: path and image must not be NULL");
  return guarded([&] { to_c_image(flashps::read_image(path), image); });
}

flashps_status flashps_image_save(const char* path, const flashps_image* image) {
  if (!path || !image) return invalid("flashps_image_save: path and image must not be NULL");
  return guarded([&] { flashps::write_image(path, to_image(*image, path)); });
}

void flashps_image_free(flashps_image* image) {
  if (!image) return;
  std::free(image->pixels);
  image->pixels = nullptr;
  image->width = image->height = image->channels = 0;
}

}  // extern "C"
