// flashps/engine.h (all but the batch functions, in batch_api.cpp) over serve::Engine: opening a
// model on one worker per device, submitting with events, request handles, template registration
// between steps.
#include "flashps/engine.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>

#include "api/abi_layout.h"
#include "api/api_support.h"
#include "api/edit_request.h"
#include "api/engine_handle.h"
#include "api/handles.h"
#include "api/serving_names.h"
#include "cache/activation_store.h"
#include "core/diagnostics/error.h"
#include "api/model_loading.h"
#include "pipeline/family_registry.h"
#include "serve/batching.h"
#include "serve/device_selection.h"
#include "serve/engine_device.h"

namespace {

using flashps::InvalidArgumentError;
using flashps::api::fail;
using flashps::api::guarded;
using flashps::api::invalid;
namespace serve = flashps::serve;

serve::EngineOptions engine_options(const flashps_engine_params& params) {
  if (params.max_batch < 0 || params.max_batch > FLASHPS_MAX_BATCH)
    throw InvalidArgumentError("flashps_engine_params.max_batch is " + std::to_string(params.max_batch) +
                               "; it must be 0 (per device) to " + std::to_string(FLASHPS_MAX_BATCH));
  if (params.pool_threads < 0 || params.pool_threads > FLASHPS_MAX_POOL_THREADS)
    throw InvalidArgumentError("flashps_engine_params.pool_threads is " + std::to_string(params.pool_threads) +
                               "; it must be 0 (1) to " + std::to_string(FLASHPS_MAX_POOL_THREADS));
  if (params.compute_nice < 0 || params.compute_nice > FLASHPS_MAX_COMPUTE_NICE)
    throw InvalidArgumentError("flashps_engine_params.compute_nice is " + std::to_string(params.compute_nice) +
                               "; it must be 0 (unchanged) to " + std::to_string(FLASHPS_MAX_COMPUTE_NICE));
  serve::EngineOptions options;
  options.batching = serve::batching_config(flashps::api::batching_name(params.batching), params.max_batch);
  options.policy = flashps::api::to_policy(params.policy);
  options.max_queued = params.max_queued > 0 ? params.max_queued : 64;
  options.pool_threads = params.pool_threads > 0 ? params.pool_threads : 1;
  options.compute_nice = params.compute_nice;
  return options;
}

// The store every device shares: the caller's, else a folder, else one in memory (one for all
// devices, so a template registered on the first serves every worker).
std::shared_ptr<flashps::engine::CaptureStore> open_store(const flashps_engine_params& params) {
  std::shared_ptr<flashps::engine::CaptureStore> store = flashps::api::capture_store_for(params.store, params.capture_dir);
  return store ? store : std::make_shared<flashps::engine::MemoryCaptureStore>();
}

// Loading progress ("load": devices loaded of all); returning 0 cancels the open.
void report_load(const flashps_engine_params& params, int loaded, int total, std::chrono::steady_clock::time_point start) {
  if (!params.progress) return;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!params.progress("load", loaded, total, seconds, params.user_data)) throw flashps::Cancelled();
}

// A pipeline for every device into `handle` (its store set): workers on `model`'s device share its
// weights; the model is loaded again, from its folder, for each other device.
std::vector<serve::EngineDevice> load_devices(flashps_engine& handle, std::shared_ptr<flashps::InpaintModel> model,
                                              const flashps_engine_params& params) {
  const std::vector<at::Device> devices = serve::select_devices(params.devices ? params.devices : "cpu");
  const std::string profile = params.profile_path ? params.profile_path : "";
  const auto start = std::chrono::steady_clock::now();
  const int total = static_cast<int>(devices.size());
  report_load(params, 0, total, start);
  std::vector<serve::EngineDevice> workers;
  for (const at::Device& device : devices) handle.devices += (handle.devices.empty() ? "" : ",") + device.str();
  std::map<std::string, std::shared_ptr<flashps::InpaintModel>> models{{model->device().str(), model}};
  for (const at::Device& device : devices) {
    std::shared_ptr<flashps::InpaintModel>& weights = models[device.str()];
    if (!weights) weights = flashps::load_model(model->model_dir(), {model->dtype(), device, model->files()});
    std::shared_ptr<flashps::InpaintPipeline> pipeline = weights->new_pipeline(handle.store);
    if (!handle.first_pipeline) {
      handle.first_pipeline = pipeline;
      handle.model = weights;
    }
    // Repeated CPU workers get numbered names, so logs and metrics tell them apart.
    const auto repeats = std::count(devices.begin(), devices.end(), device);
    const std::string name = repeats > 1 ? device.str() + "/" + std::to_string(workers.size()) : device.str();
    workers.push_back(serve::engine_device(std::move(pipeline), profile, name));
    report_load(params, static_cast<int>(workers.size()), total, start);
  }
  return workers;
}

flashps_request_status to_c_status(serve::RequestStatus status) {
  switch (status) {
    case serve::RequestStatus::queued: return FLASHPS_REQUEST_QUEUED;
    case serve::RequestStatus::preparing: return FLASHPS_REQUEST_PREPARING;
    case serve::RequestStatus::ready: return FLASHPS_REQUEST_READY;
    case serve::RequestStatus::running: return FLASHPS_REQUEST_RUNNING;
    case serve::RequestStatus::finishing: return FLASHPS_REQUEST_FINISHING;
    case serve::RequestStatus::done: return FLASHPS_REQUEST_DONE;
    case serve::RequestStatus::failed: return FLASHPS_REQUEST_FAILED;
    case serve::RequestStatus::cancelled: return FLASHPS_REQUEST_CANCELLED;
    case serve::RequestStatus::rejected: return FLASHPS_REQUEST_REJECTED;
  }
  return FLASHPS_REQUEST_FAILED;
}

// The caller's callback over the engine's events; the message and preview are views valid during
// the call (the engine keeps the event alive until it returns).
serve::ServeEventCallback to_event_callback(flashps_event_callback callback, void* user_data) {
  return [callback, user_data](const serve::ServeEvent& event) {
    // A rejected request's one event is not the caller's: flashps_engine_submit returned
    // FLASHPS_REJECTED for it, and engine.h promises on_event is then never called (the caller
    // may already have freed user_data).
    if (event.status == serve::RequestStatus::rejected) return;
    flashps_event out{};
    out.struct_size = sizeof(out);
    out.request_id = event.id;
    out.status = to_c_status(event.status);
    out.step = event.step;
    out.steps = event.steps;
    out.seconds = event.seconds;
    out.worker = event.worker;
    out.message = event.message.c_str();
    flashps_image preview{};
    if (event.preview) {
      preview.width = static_cast<uint32_t>(event.preview->width);
      preview.height = static_cast<uint32_t>(event.preview->height);
      preview.channels = static_cast<uint32_t>(event.preview->channels);
      preview.pixels = const_cast<uint8_t*>(event.preview->pixels.data());  // read-only by contract
      out.preview = &preview;
    }
    callback(&out, user_data);
  };
}

serve::SubmitOptions to_submit_options(const flashps_submit_params& params) {
  if (!(params.deadline_seconds >= 0 && std::isfinite(params.deadline_seconds)))
    throw InvalidArgumentError("flashps_submit_params.deadline_seconds is " + std::to_string(params.deadline_seconds) +
                               "; it must be finite and >= 0 (0: none)");
  if (params.preview_every_steps < 0)
    throw InvalidArgumentError("flashps_submit_params.preview_every_steps is " +
                               std::to_string(params.preview_every_steps) + "; it must be >= 0 (0: no previews)");
  serve::SubmitOptions options;
  options.deadline_seconds = params.deadline_seconds;
  options.preview_every_steps = params.preview_every_steps;
  if (params.on_event) options.on_event = to_event_callback(params.on_event, params.user_data);
  return options;
}

// Waits up to `timeout_seconds` (< 0, or longer than any real wait: forever); true once resolved.
bool wait_for(const flashps_request& request, double timeout_seconds) {
  constexpr double kForever = 1e9;  // ~30 years: beyond it, chrono conversions could overflow
  if (timeout_seconds < 0 || timeout_seconds > kForever) {
    request.handle.result().wait();
    return true;
  }
  return request.handle.wait_for(timeout_seconds);
}

bool valid_timeout(double timeout_seconds) { return !std::isnan(timeout_seconds); }

std::unique_ptr<flashps_engine> open_engine(const flashps_model& model, const flashps_engine_params& params,
                                            const serve::EngineOptions& options) {
  auto handle = std::make_unique<flashps_engine>();
  handle->store = open_store(params);
  std::vector<serve::EngineDevice> devices = load_devices(*handle, model.model, params);
  handle->workers = static_cast<int>(devices.size());
  handle->engine = std::make_unique<serve::Engine>(std::move(devices), options);
  // As flashps_editor_info describes an editor's; the device is the engine's device list.
  handle->info = flashps::api::describe_model(*handle->model, handle->devices);
  return handle;
}

// Resumes the engine however the registration ends.
struct PausedEngine {
  explicit PausedEngine(serve::Engine& engine) : engine(engine) { engine.pause(); }
  ~PausedEngine() { engine.resume(); }
  serve::Engine& engine;
};

}  // namespace

extern "C" {

flashps_engine_params flashps_engine_default_params(void) {
  flashps_engine_params params{};
  params.struct_size = sizeof(params);
  params.batching = FLASHPS_BATCHING_CB;
  params.policy = FLASHPS_BALANCE_MASK_AWARE;
  return params;
}

flashps_submit_params flashps_submit_default_params(void) {
  flashps_submit_params params{};
  params.struct_size = sizeof(params);
  return params;
}

const char* flashps_request_status_name(flashps_request_status status) {
  switch (status) {
    case FLASHPS_REQUEST_QUEUED: return "queued";
    case FLASHPS_REQUEST_PREPARING: return "preparing";
    case FLASHPS_REQUEST_READY: return "ready";
    case FLASHPS_REQUEST_RUNNING: return "running";
    case FLASHPS_REQUEST_FINISHING: return "finishing";
    case FLASHPS_REQUEST_DONE: return "done";
    case FLASHPS_REQUEST_FAILED: return "failed";
    case FLASHPS_REQUEST_CANCELLED: return "cancelled";
    case FLASHPS_REQUEST_REJECTED: return "rejected";
  }
  return "unknown";
}

flashps_status flashps_engine_open(const char* model_dir, const flashps_engine_params* given, flashps_engine** engine) {
  static constexpr const char* kFunction = "flashps_engine_open";
  if (!engine) return invalid(kFunction, "engine must not be NULL");
  *engine = nullptr;
  flashps_engine_params params = flashps_engine_default_params();
  if (!flashps::api::read_params(given, flashps::api::kEngineParamsV2Size, params, kFunction,
                                 "flashps_engine_params"))
    return FLASHPS_INVALID_ARGUMENT;
  if (model_dir && !*model_dir) return invalid(kFunction, "model_dir is \"\": give a folder, or NULL for the default");
  return guarded([&] {
    const serve::EngineOptions options = engine_options(params);
    // The first device's weights; the others load in load_devices, with progress per device.
    flashps_model_params model_params = flashps_model_default_params();
    model_params.bf16 = params.bf16;
    const std::string first_device = serve::select_devices(params.devices ? params.devices : "cpu").front().str();
    model_params.device = first_device.c_str();
    const std::unique_ptr<flashps_model> model = flashps::api::open_model(model_dir, model_params);
    *engine = open_engine(*model, params, options).release();
  });
}

flashps_status flashps_engine_open_model(flashps_model* model, const flashps_engine_params* given,
                                         flashps_engine** engine) {
  static constexpr const char* kFunction = "flashps_engine_open_model";
  if (!engine) return invalid(kFunction, "engine must not be NULL");
  *engine = nullptr;
  if (!model) return invalid(kFunction, "model is NULL");
  flashps_engine_params params = flashps_engine_default_params();
  if (!flashps::api::read_params(given, flashps::api::kEngineParamsV2Size, params, kFunction,
                                 "flashps_engine_params"))
    return FLASHPS_INVALID_ARGUMENT;
  return guarded([&] {
    const serve::EngineOptions options = engine_options(params);
    flashps::api::check_same_weights(*model, params.bf16, nullptr, "flashps_engine_params");
    *engine = open_engine(*model, params, options).release();
  });
}

void flashps_engine_close(flashps_engine* engine) { delete engine; }

flashps_status flashps_engine_info(const flashps_engine* engine, flashps_model_info* info) {
  static constexpr const char* kFunction = "flashps_engine_info";
  if (!engine || !info) return invalid(kFunction, "engine and info must not be NULL");
  if (!flashps::api::check_output_size(info->struct_size, flashps::api::kModelInfoV2Size,
                                       kFunction, "flashps_model_info"))
    return FLASHPS_INVALID_ARGUMENT;
  flashps::api::write_output(info, engine->info);
  return guarded([] {});
}

flashps_status flashps_engine_submit(flashps_engine* engine, const flashps_image* image, const flashps_image* mask,
                                     const flashps_edit_params* given, const flashps_submit_params* given_submit,
                                     flashps_request** request) {
  static constexpr const char* kFunction = "flashps_engine_submit";
  if (!engine || !image || !mask || !request)
    return invalid(kFunction, "engine, image, mask and request must not be NULL");
  *request = nullptr;
  flashps_edit_params params = flashps_edit_default_params();
  if (!flashps::api::read_params(given, flashps::api::kEditParamsV1Size, params, kFunction,
                                 "flashps_edit_params"))
    return FLASHPS_INVALID_ARGUMENT;
  flashps_submit_params submit = flashps_submit_default_params();
  if (!flashps::api::read_params(given_submit, flashps::api::kSubmitParamsV2Size, submit,
                                 kFunction, "flashps_submit_params"))
    return FLASHPS_INVALID_ARGUMENT;
  std::unique_ptr<flashps_request> created;
  const flashps_status status = guarded([&] {
    flashps::EditRequest edit = flashps::api::to_request(params);
    edit.progress = nullptr;  // events replace it (engine.h)
    edit.image = flashps::api::to_image(*image, "flashps_engine_submit: image");
    edit.mask = flashps::api::to_image(*mask, "flashps_engine_submit: mask");
    serve::SubmitOptions options = to_submit_options(submit);
    created = std::make_unique<flashps_request>();
    created->handle = engine->engine->submit(std::move(edit), std::move(options));
  });
  if (status != FLASHPS_OK) return status;
  if (created->handle.status() == serve::RequestStatus::rejected) {
    try {
      created->handle.wait();
    } catch (const std::exception& error) {
      return fail(FLASHPS_REJECTED, kFunction, error.what());
    }
  }
  *request = created.release();
  return FLASHPS_OK;
}

flashps_status flashps_engine_wait_idle(flashps_engine* engine) {
  if (!engine) return invalid("flashps_engine_wait_idle", "engine must not be NULL");
  return guarded([&] { engine->engine->wait_idle(); });
}

flashps_status flashps_engine_counters_get(const flashps_engine* engine, flashps_engine_counters* counters) {
  static constexpr const char* kFunction = "flashps_engine_counters_get";
  if (!engine || !counters) return invalid(kFunction, "engine and counters must not be NULL");
  if (!flashps::api::check_output_size(counters->struct_size, flashps::api::kEngineCountersV2Size,
                                       kFunction, "flashps_engine_counters"))
    return FLASHPS_INVALID_ARGUMENT;
  return guarded([&] {
    const serve::EngineCounters counted = engine->engine->counters();
    flashps_engine_counters out{};
    out.submitted = counted.submitted;
    out.done = counted.done;
    out.failed = counted.failed;
    out.cancelled = counted.cancelled;
    out.rejected = counted.rejected;
    out.steps = counted.steps;
    out.workers = engine->workers;
    flashps::api::write_output(counters, out);
  });
}

flashps_status flashps_engine_register_template(flashps_engine* engine, const flashps_image* image,
                                                const flashps_image* mask, const flashps_edit_params* given,
                                                flashps_edit_stats* stats) {
  static constexpr const char* kFunction = "flashps_engine_register_template";
  if (!engine || !image) return invalid(kFunction, "engine and image must not be NULL");
  flashps_edit_params params = flashps_edit_default_params();
  if (!flashps::api::read_params(given, flashps::api::kEditParamsV1Size, params, kFunction,
                                 "flashps_edit_params"))
    return FLASHPS_INVALID_ARGUMENT;
  if (stats && !flashps::api::check_output_size(stats->struct_size, flashps::api::kEditStatsV1Size,
                                                kFunction, "flashps_edit_stats"))
    return FLASHPS_INVALID_ARGUMENT;
  return guarded([&] {
    flashps::EditRequest request = flashps::api::to_request(params);
    request.image = flashps::api::to_image(*image, "flashps_engine_register_template: image");
    if (mask) request.mask = flashps::api::to_image(*mask, "flashps_engine_register_template: mask");
    // Between steps: pause() returns once the running steps are done, and no worker steps its
    // pipeline until resumed, so the registration is the pipeline's only stepper meanwhile.
    std::lock_guard<std::mutex> one_at_a_time(engine->registering);
    PausedEngine paused(*engine->engine);
    const flashps::ModelCapabilities capabilities = engine->model->capabilities();
    const flashps::TemplateInfo info =
        engine->first_pipeline->register_template(request, capabilities.kv_replay, capabilities.hidden_replay);
    flashps::api::fill_stats(info.stats, info.bytes, stats);
  });
}

uint64_t flashps_request_id(const flashps_request* request) { return request ? request->handle.id() : 0; }

flashps_request_status flashps_request_get_status(const flashps_request* request) {
  return request ? to_c_status(request->handle.status()) : FLASHPS_REQUEST_REJECTED;
}

flashps_status flashps_request_wait(flashps_request* request, double timeout_seconds, int* resolved) {
  static constexpr const char* kFunction = "flashps_request_wait";
  if (!request) return invalid(kFunction, "request must not be NULL");
  if (!valid_timeout(timeout_seconds)) return invalid(kFunction, "timeout_seconds is NaN");
  return guarded([&] {
    const bool done = wait_for(*request, timeout_seconds);
    if (resolved) *resolved = done ? 1 : 0;
  });
}

flashps_status flashps_request_cancel(flashps_request* request) {
  if (!request) return invalid("flashps_request_cancel", "request must not be NULL");
  return guarded([&] { request->handle.cancel(); });
}

flashps_status flashps_request_result(flashps_request* request, double timeout_seconds, flashps_image* result,
                                      flashps_edit_stats* stats) {
  static constexpr const char* kFunction = "flashps_request_result";
  if (!request) return invalid(kFunction, "request must not be NULL");
  if (!valid_timeout(timeout_seconds)) return invalid(kFunction, "timeout_seconds is NaN");
  if (stats && !flashps::api::check_output_size(stats->struct_size, flashps::api::kEditStatsV1Size,
                                                kFunction, "flashps_edit_stats"))
    return FLASHPS_INVALID_ARGUMENT;
  bool resolved = false;
  flashps_status status = guarded([&] { resolved = wait_for(*request, timeout_seconds); });
  if (status != FLASHPS_OK) return status;
  const std::string name = "request " + std::to_string(request->handle.id());
  if (!resolved)
    return fail(FLASHPS_ERROR, kFunction,
                name + " is still running (not resolved within " + std::to_string(timeout_seconds) + " s)");
  const flashps::EditResult* edited = nullptr;
  try {
    edited = &request->handle.result().get();
  } catch (const flashps::Cancelled&) {
    return fail(FLASHPS_CANCELLED, kFunction, name + " was cancelled");
  } catch (const serve::RequestRejected& error) {
    return fail(FLASHPS_REJECTED, kFunction, error.what());
  } catch (const serve::DeadlineExceeded& error) {
    return fail(FLASHPS_DEADLINE_EXCEEDED, kFunction, name + ": " + error.what());
  } catch (...) {
    // The edit's own error, mapped to its status as every other call maps it.
    const std::exception_ptr error = std::current_exception();
    return guarded([&] { std::rethrow_exception(error); });
  }
  return guarded([&] {
    std::call_once(request->notes_joined,
                   [&] { request->notes = flashps::api::join_lines(edited->stats.notes); });
    if (result) flashps::api::to_c_image(edited->image, result);
    flashps::api::fill_stats(edited->stats, edited->stats.cache_bytes_loaded, stats,
                             flashps::api::StatsStrings{&request->notes, &edited->stats.template_hash});
  });
}

void flashps_request_free(flashps_request* request) { delete request; }

}  // extern "C"
