// FlashPS C++ wrapper, part of <flashps/flashps.hpp> (include that).
// The serving engine: submit from any thread, events, cancel, deadlines, results; batch manifests.
#ifndef FLASHPS_CPP_ENGINE_HPP
#define FLASHPS_CPP_ENGINE_HPP

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "flashps/cpp/common.hpp"
#include "flashps/cpp/edit.hpp"
#include "flashps/cpp/model.hpp"
#include "flashps/cpp/store.hpp"

namespace flashps::sdk {

enum class Batching { cb = FLASHPS_BATCHING_CB, naive_cb = FLASHPS_BATCHING_NAIVE_CB, static_batch = FLASHPS_BATCHING_STATIC,
                      static_full = FLASHPS_BATCHING_STATIC_FULL };
// "cb", "naive-cb", "static", "static-full"; Error(FLASHPS_INVALID_ARGUMENT) naming them otherwise.
inline Batching batching_from_name(const std::string& name) {
  flashps_batching batching = FLASHPS_BATCHING_CB;
  check(flashps_batching_from_name(name.c_str(), &batching));
  return static_cast<Batching>(batching);
}
inline const char* batching_name(Batching batching) {
  const char* name = flashps_batching_name(static_cast<flashps_batching>(batching));
  return name ? name : "?";
}

enum class BalancePolicy { mask_aware = FLASHPS_BALANCE_MASK_AWARE, round_robin = FLASHPS_BALANCE_ROUND_ROBIN,
                           request_count = FLASHPS_BALANCE_REQUEST_COUNT, token_count = FLASHPS_BALANCE_TOKEN_COUNT };
// "mask-aware", "round-robin", "request-count", "token-count"; Error naming them otherwise.
inline BalancePolicy balance_policy_from_name(const std::string& name) {
  flashps_balance_policy policy = FLASHPS_BALANCE_MASK_AWARE;
  check(flashps_balance_policy_from_name(name.c_str(), &policy));
  return static_cast<BalancePolicy>(policy);
}
inline const char* balance_policy_name(BalancePolicy policy) {
  const char* name = flashps_balance_policy_name(static_cast<flashps_balance_policy>(policy));
  return name ? name : "?";
}

struct EngineOptions {
  std::string devices;  // empty: "cpu"
  bool bf16 = false;
  Store store;
  std::string capture_dir;
  Batching batching = Batching::cb;
  BalancePolicy policy = BalancePolicy::mask_aware;
  int max_batch = 0;       // 0: per device: 1 where its profile shows batching saves under 10% per
                           // request, else 8 (flashps_engine_params.max_batch)
  size_t max_queued = 0;   // 0: 64
  int pool_threads = 0;    // 0: 1
  std::string profile_path;
  ProgressFunction progress;  // loading
  int compute_nice = 0;       // added to the compute threads' nice value (flashps serve: 10)
};

struct Event {
  uint64_t request_id = 0;
  flashps_request_status status = FLASHPS_REQUEST_QUEUED;
  int step = 0, steps = 0;
  double seconds = 0;
  int worker = -1;
  std::string message;
  const flashps_image* preview = nullptr;  // valid during the callback only
  bool terminal() const {
    return status == FLASHPS_REQUEST_DONE || status == FLASHPS_REQUEST_FAILED || status == FLASHPS_REQUEST_CANCELLED ||
           status == FLASHPS_REQUEST_REJECTED;
  }
};
using EventFunction = std::function<void(const Event&)>;

struct SubmitOptions {
  double deadline_seconds = 0;
  int preview_every_steps = 0;
  EventFunction on_event;  // on the engine's event thread
};

// A submitted request; copies share one handle.
class Request {
 public:
  Request() = default;
  explicit Request(flashps_request* request) : handle_(request, flashps_request_free) {}
  explicit operator bool() const { return static_cast<bool>(handle_); }
  uint64_t id() const { return flashps_request_id(handle_.get()); }
  flashps_request_status status() const { return flashps_request_get_status(handle_.get()); }
  // True once resolved (timeout < 0: wait for ever).
  bool wait(double timeout_seconds = -1) const {
    int resolved = 0;
    check(flashps_request_wait(handle_.get(), timeout_seconds, &resolved));
    return resolved != 0;
  }
  void cancel() const { check(flashps_request_cancel(handle_.get())); }
  // Waits, then returns the result or throws Error (CANCELLED, DEADLINE_EXCEEDED, the edit's error).
  EditResult result(double timeout_seconds = -1) const {
    flashps_image image{};
    flashps_edit_stats stats = EditStats::empty_c();
    check(flashps_request_result(handle_.get(), timeout_seconds, &image, &stats));
    EditStats edit_stats = EditStats::from_c(stats);
    return {Image::adopt(image), std::move(edit_stats)};
  }

 private:
  std::shared_ptr<flashps_request> handle_;
};

struct BatchOptions {
  bool resume = true;
  size_t max_in_flight = 0;  // 0: the engine's queue length
  std::string json_report_path;
  ProgressFunction progress;  // stage "batch"
  std::function<void(int line, const std::string& output, const std::string& error)> on_failure;
};

struct BatchSummary {
  int total = 0, done = 0, skipped = 0, failed = 0, cancelled = 0, cache_hits = 0;
  double seconds = 0, throughput = 0;
  std::vector<std::string> notes;
};

// Thrown by Engine::run_batch when its progress callback answered false (status CANCELLED). The
// batch still ended cleanly: outputs finished before the cancel are written, the JSON report too,
// and summary() counts every item (the cancelled ones included).
class BatchCancelled : public Error {
 public:
  BatchCancelled(const std::string& message, BatchSummary summary)
      : Error(FLASHPS_CANCELLED, message), summary_(std::move(summary)) {}
  const BatchSummary& summary() const { return summary_; }

 private:
  BatchSummary summary_;
};

// Items in a manifest; throws CORRUPT_DATA naming the file and line.
inline int validate_batch(const std::string& manifest_path) {
  int items = 0;
  check(flashps_batch_validate(manifest_path.c_str(), &items));
  return items;
}

struct EngineCounters {
  int64_t submitted = 0, done = 0, failed = 0, cancelled = 0, rejected = 0, steps = 0;
  int workers = 0;
};

class Engine {
 public:
  Engine() = default;
  static Engine open(const std::string& model_dir = "", const EngineOptions& options = {}) {
    flashps_engine_params params = to_c(options);
    flashps_engine* engine = nullptr;
    check(flashps_engine_open(detail::c_str_or_null(model_dir), &params, &engine));
    Engine result;
    result.handle_.reset(engine, flashps_engine_close);
    return result;
  }
  // Over an open model: workers on its device share its weights (options.bf16 must match it).
  static Engine open(const Model& model, const EngineOptions& options = {}) {
    flashps_engine_params params = to_c(options);
    flashps_engine* engine = nullptr;
    check(flashps_engine_open_model(model.get(), &params, &engine));
    Engine result;
    result.handle_.reset(engine, flashps_engine_close);
    return result;
  }
  // A view of an engine someone else opened and closes (it must outlive this object).
  static Engine borrow(flashps_engine* engine) {
    Engine result;
    result.handle_.reset(engine, [](flashps_engine*) {});
    return result;
  }
  explicit operator bool() const { return static_cast<bool>(handle_); }
  flashps_engine* get() const { return handle_.get(); }
  // Cancels what is outstanding and joins the engine's threads (the destructor of the last copy
  // does the same).
  void close() { handle_.reset(); }

  ModelInfo info() const {
    flashps_model_info c{};
    c.struct_size = sizeof(c);
    check(flashps_engine_info(handle_.get(), &c));
    return ModelInfo::from_c(c);
  }
  Request submit(const Image& image, const Image& mask, const EditOptions& options = {},
                 const SubmitOptions& submit_options = {}) const {
    const flashps_edit_params params = options.to_c();
    const flashps_image c_image = image.view(), c_mask = mask.view();
    flashps_submit_params submit = flashps_submit_default_params();
    submit.deadline_seconds = submit_options.deadline_seconds;
    submit.preview_every_steps = submit_options.preview_every_steps;
    // The callback lives until the request's terminal event (the C API guarantees exactly one).
    EventFunction* callback = nullptr;
    if (submit_options.on_event) {
      callback = new EventFunction(submit_options.on_event);
      submit.on_event = event_trampoline;
      submit.user_data = callback;
    }
    flashps_request* request = nullptr;
    const flashps_status status = flashps_engine_submit(handle_.get(), &c_image, &c_mask, &params, &submit, &request);
    if (status != FLASHPS_OK) {
      delete callback;  // never called when submission fails
      check(status);
    }
    return Request(request);
  }
  void wait_idle() const { check(flashps_engine_wait_idle(handle_.get())); }
  EngineCounters counters() const {
    flashps_engine_counters c{};
    c.struct_size = sizeof(c);
    check(flashps_engine_counters_get(handle_.get(), &c));
    return {c.submitted, c.done, c.failed, c.cancelled, c.rejected, c.steps, c.workers};
  }
  EditStats register_template(const Image& image, const Image* mask, const EditOptions& options = {}) const {
    const flashps_edit_params params = options.to_c();
    const flashps_image c_image = image.view();
    flashps_image c_mask{};
    if (mask) c_mask = mask->view();
    flashps_edit_stats stats = EditStats::empty_c();
    check(flashps_engine_register_template(handle_.get(), &c_image, mask ? &c_mask : nullptr, &params, &stats));
    return EditStats::from_c(stats);
  }
  BatchSummary run_batch(const std::string& manifest_path, const BatchOptions& options = {}) const {
    flashps_batch_params params = flashps_batch_default_params();
    params.resume = options.resume ? 1 : 0;
    params.max_in_flight = options.max_in_flight;
    params.json_report_path = detail::c_str_or_null(options.json_report_path);
    BatchCallbacks callbacks{&options};
    params.user_data = &callbacks;
    if (options.progress)
      params.progress = [](const char* stage, int step, int total, double seconds, void* user_data) {
        const auto* callbacks = static_cast<BatchCallbacks*>(user_data);
        return detail::progress_trampoline(stage, step, total, seconds,
                                           const_cast<ProgressFunction*>(&callbacks->options->progress));
      };
    if (options.on_failure)
      params.on_failure = [](int line, const char* output, const char* error, void* user_data) {
        try {
          static_cast<BatchCallbacks*>(user_data)->options->on_failure(line, output ? output : "", error ? error : "");
        } catch (...) {
        }
      };
    flashps_batch_summary c{};
    c.struct_size = sizeof(c);
    const flashps_status status = flashps_engine_run_batch(handle_.get(), manifest_path.c_str(), &params, &c);
    if (status != FLASHPS_CANCELLED) check(status);
    BatchSummary summary{c.total,   c.done,       c.skipped, c.failed, c.cancelled, c.cache_hits,
                         c.seconds, c.throughput, detail::split_lines(c.notes)};
    if (status == FLASHPS_CANCELLED) throw BatchCancelled(flashps_last_error(), std::move(summary));
    return summary;
  }

 private:
  // The C params of `options` (both open() overloads).
  static flashps_engine_params to_c(const EngineOptions& options) {
    flashps_engine_params params = flashps_engine_default_params();
    params.devices = detail::c_str_or_null(options.devices);
    params.bf16 = options.bf16 ? 1 : 0;
    params.store = options.store.get();
    params.capture_dir = detail::c_str_or_null(options.capture_dir);
    params.batching = static_cast<flashps_batching>(options.batching);
    params.policy = static_cast<flashps_balance_policy>(options.policy);
    params.max_batch = options.max_batch;
    params.max_queued = options.max_queued;
    params.pool_threads = options.pool_threads;
    params.profile_path = detail::c_str_or_null(options.profile_path);
    params.compute_nice = options.compute_nice;
    if (options.progress) {
      params.progress = detail::progress_trampoline;
      params.user_data = const_cast<ProgressFunction*>(&options.progress);
    }
    return params;
  }
  struct BatchCallbacks {
    const BatchOptions* options;
  };
  static void event_trampoline(const flashps_event* c, void* user_data) {
    auto* callback = static_cast<EventFunction*>(user_data);
    Event event;
    event.request_id = c->request_id;
    event.status = c->status;
    event.step = c->step;
    event.steps = c->steps;
    event.seconds = c->seconds;
    event.worker = c->worker;
    event.message = c->message ? c->message : "";
    event.preview = c->preview;
    try {
      (*callback)(event);
    } catch (...) {
    }
    if (event.terminal()) delete callback;
  }
  std::shared_ptr<flashps_engine> handle_;
};

// ---- Mask painting ----

}  // namespace flashps::sdk

#endif  // FLASHPS_CPP_ENGINE_HPP
