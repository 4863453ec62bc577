// flashps/model.h: models — a family detected by the registry (pipeline/family_registry.h) and its
// weights loaded once; editors and engines take references to them.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>

#include "api/abi_layout.h"
#include "api/api_support.h"
#include "api/handles.h"
#include "api/model_loading.h"
#include "app/default_model.h"
#include "core/diagnostics/error.h"
#include "flashps/flashps.h"
#include "pipeline/family_registry.h"
#include "pipeline/model_description.h"
#include "serve/device_selection.h"

namespace flashps::api {
namespace {

// Reports loading progress as stage "load": step 0 of 1 when it starts, 1 of 1 when the model is
// in memory; a callback returning 0 at either point cancels the open.
class LoadProgress {
 public:
  LoadProgress(flashps_progress_callback callback, void* user_data) : callback_(callback), user_data_(user_data) {}
  void report(int step) const {
    if (!callback_) return;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (callback_("load", step, 1, seconds, user_data_) == 0) throw Cancelled();
  }

 private:
  flashps_progress_callback callback_;
  void* user_data_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

std::string text_or_empty(const char* value) { return value ? std::string(value) : std::string(); }

ModelFiles model_files_of(const flashps_model_params& params) {
  ModelFiles files;
  files.vae = text_or_empty(params.vae_path);
  files.text_encoder = text_or_empty(params.text_encoder_path);
  files.text_encoder_2 = text_or_empty(params.text_encoder_2_path);
  files.model_type = text_or_empty(params.model_type);
  files.tokenizers_dir = text_or_empty(params.tokenizers_dir);
  return files;
}

}  // namespace

flashps_model_info describe_model(const InpaintModel& model, const std::string& device) {
  const ModelCapabilities capabilities = model.capabilities();
  flashps_model_info info{};
  info.struct_size = sizeof(info);
  info.family = static_cast<flashps_model_family>(model.family().c_family);
  info.family_name = model.family().name.c_str();
  info.model_dir = model.model_dir().c_str();
  info.fingerprint = model.fingerprint().c_str();
  info.device = device.c_str();
  info.native_size = capabilities.native_size;
  info.takes_text = capabilities.takes_text ? 1 : 0;
  info.default_steps = capabilities.default_steps;
  info.is_fill = capabilities.is_fill ? 1 : 0;
  info.unconditional = capabilities.unconditional ? 1 : 0;
  info.recommends_texture_transfer = capabilities.recommends_texture_transfer ? 1 : 0;
  info.bf16 = model.dtype() == at::kBFloat16 ? 1 : 0;
  return info;
}

std::unique_ptr<flashps_model> open_model(const char* model_dir, const flashps_model_params& params) {
  const LoadProgress progress(params.progress, params.user_data);
  progress.report(0);
  ModelLoadOptions options;
  options.dtype = params.bf16 ? at::kBFloat16 : at::kFloat;
  options.device = params.device ? serve::select_device(params.device) : at::Device(at::kCPU);
  options.files = model_files_of(params);
  auto handle = std::make_unique<flashps_model>();
  handle->model = load_model(model_dir ? model_dir : app::default_model().dir, options);
  handle->device = options.device.str();
  handle->info = describe_model(*handle->model, handle->device);
  progress.report(1);
  return handle;
}

void check_same_weights(const flashps_model& model, int bf16, const char* device, const char* params_name) {
  const bool model_bf16 = model.model->dtype() == at::kBFloat16;
  if (bf16 && !model_bf16)
    throw InvalidArgumentError(std::string(params_name) + ".bf16 is set, but the model was opened in float32 "
                               "(open the model with flashps_model_params.bf16)");
  if (device && serve::select_device(device) != model.model->device())
    throw InvalidArgumentError(std::string(params_name) + ".device is \"" + device + "\", but the model is on " +
                               model.device + " (open the model there, or leave device NULL)");
}

}  // namespace flashps::api

using flashps::api::guarded;
using flashps::api::invalid;

extern "C" {

flashps_model_params flashps_model_default_params(void) {
  flashps_model_params params{};
  params.struct_size = sizeof(params);
  params.bf16 = 0;
  params.device = nullptr;
  params.progress = nullptr;
  params.user_data = nullptr;
  params.vae_path = params.text_encoder_path = params.text_encoder_2_path = nullptr;
  params.model_type = params.tokenizers_dir = nullptr;
  return params;
}

flashps_status flashps_model_open(const char* model_dir, const flashps_model_params* given, flashps_model** model) {
  const char* const function = "flashps_model_open";
  if (!model) return invalid(function, "model (the output) is NULL");
  *model = nullptr;
  flashps_model_params params = flashps_model_default_params();
  if (!flashps::api::read_params(given, flashps::api::kModelParamsV6Size, params, function, "flashps_model_params"))
    return FLASHPS_INVALID_ARGUMENT;
  if (model_dir && !*model_dir)
    return invalid(function, "model_dir is \"\": give a folder or model file, or NULL for the default");
  return guarded([&] { *model = flashps::api::open_model(model_dir, params).release(); });
}

flashps_status flashps_model_describe(const char* path, const flashps_model_params* given, char** json) {
  const char* const function = "flashps_model_describe";
  if (!json) return invalid(function, "json (the output) is NULL");
  *json = nullptr;
  if (!path || !*path) return invalid(function, "path is empty: give a model folder or file");
  flashps_model_params params = flashps_model_default_params();
  if (given && !flashps::api::read_params(given, flashps::api::kModelParamsV6Size, params, function,
                                          "flashps_model_params"))
    return FLASHPS_INVALID_ARGUMENT;
  return guarded([&] {
    const std::string text = flashps::inspect_model(path, flashps::api::model_files_of(params)).dump(2);
    char* buffer = static_cast<char*>(std::malloc(text.size() + 1));
    if (!buffer) throw std::bad_alloc();
    std::memcpy(buffer, text.c_str(), text.size() + 1);
    *json = buffer;
  });
}

void flashps_model_free(flashps_model* model) { delete model; }

flashps_status flashps_model_get_info(const flashps_model* model, flashps_model_info* info) {
  const char* const function = "flashps_model_get_info";
  if (!model) return invalid(function, "model is NULL");
  if (!info) return invalid(function, "info (the output) is NULL");
  if (!flashps::api::check_output_size(info->struct_size, flashps::api::kModelInfoV2Size, function,
                                       "flashps_model_info"))
    return FLASHPS_INVALID_ARGUMENT;
  return guarded([&] { flashps::api::write_output(info, model->info); });
}

}  // extern "C"
