// FlashPS C++ wrapper: header-only, over the C API (flashps/flashps.h). RAII handles, exceptions
// that carry the status, std::function callbacks. The names live in flashps::sdk so they never
// collide with the library's internals.
//
//   #include <flashps/flashps.hpp>
//   namespace fps = flashps::sdk;
//   fps::init();                                            // threads, allocator
//   fps::Editor editor = fps::Editor::open();               // the bundled model
//   fps::Image image = fps::Image::load("photo.png"), mask = fps::Image::load("mask.png");
//   fps::EditOptions options;
//   options.seed = 42;
//   editor.register_template(image, options);               // once per template (optional)
//   fps::EditResult result = editor.edit(image, mask, options);  // reuses the capture
//   result.image.save("out.png");
//
// Errors throw flashps::sdk::Error (status() says which). Callbacks that throw cancel the
// operation (exceptions never cross the C boundary).
#ifndef FLASHPS_FLASHPS_HPP
#define FLASHPS_FLASHPS_HPP

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "flashps/flashps.h"

namespace flashps::sdk {

class Error : public std::runtime_error {
 public:
  Error(flashps_status status, const std::string& message) : std::runtime_error(message), status_(status) {}
  flashps_status status() const { return status_; }
  const char* status_name() const { return flashps_status_name(status_); }

 private:
  flashps_status status_;
};

inline void check(flashps_status status) {
  if (status != FLASHPS_OK) throw Error(status, flashps_last_error());
}

namespace detail {
inline std::vector<std::string> split_lines(const char* text) {
  std::vector<std::string> lines;
  if (!text) return lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}
inline const char* c_str_or_null(const std::string& text) { return text.empty() ? nullptr : text.c_str(); }
}  // namespace detail

inline std::string version() { return flashps_version_string(); }

// Receives stage ("load", "encode", "denoise", "decode", "capture", "verify", "batch", ...),
// steps done, steps in the stage and seconds in it; returns false to cancel.
using ProgressFunction = std::function<bool(const std::string& stage, int step, int total_steps, double seconds)>;

namespace detail {
inline int progress_trampoline(const char* stage, int step, int total, double seconds, void* user_data) {
  try {
    const auto& function = *static_cast<const ProgressFunction*>(user_data);
    return function(stage ? stage : "", step, total, seconds) ? 1 : 0;
  } catch (...) {
    return 0;
  }
}
}  // namespace detail

using LogFunction = std::function<void(flashps_log_level level, const std::string& message)>;

struct RuntimeOptions {
  int threads = 0;  // 0: FLASHPS_THREADS, else all cores
  bool keep_freed_memory = true;
  LogFunction log;  // empty: warnings and errors to stderr
  flashps_log_level log_level = FLASHPS_LOG_WARNING;
};

namespace detail {
inline LogFunction& log_function() {
  static LogFunction function;
  return function;
}
inline void log_trampoline(flashps_log_level level, const char* message, void*) {
  try {
    if (log_function()) log_function()(level, message ? message : "");
  } catch (...) {
  }
}
}  // namespace detail

// Process-wide settings (threads, allocator, logging). Call before the first model.
inline void init(const RuntimeOptions& options = {}) {
  flashps_runtime_options runtime = flashps_runtime_default_options();
  runtime.threads = options.threads;
  runtime.keep_freed_memory = options.keep_freed_memory ? 1 : 0;
  runtime.log_level = options.log_level;
  detail::log_function() = options.log;
  if (options.log) runtime.log = detail::log_trampoline;
  check(flashps_init(&runtime));
}
inline int threads() { return flashps_threads(); }

// An 8-bit image that owns its pixels (interleaved, row-major; 1, 3 or 4 channels).
struct Image {
  uint32_t width = 0, height = 0, channels = 0;
  std::vector<uint8_t> pixels;

  Image() = default;
  Image(uint32_t w, uint32_t h, uint32_t c) : width(w), height(h), channels(c), pixels(size_t(w) * h * c, 0) {}
  bool empty() const { return pixels.empty(); }
  uint8_t* data() { return pixels.data(); }
  const uint8_t* data() const { return pixels.data(); }

  // A view for C calls (valid while this image is unchanged).
  flashps_image view() const {
    return flashps_image{width, height, channels, const_cast<uint8_t*>(pixels.data())};
  }
  // Takes a library-allocated image: copies its pixels and frees it.
  static Image adopt(flashps_image& owned) {
    Image image;
    image.width = owned.width;
    image.height = owned.height;
    image.channels = owned.channels;
    if (owned.pixels) image.pixels.assign(owned.pixels, owned.pixels + size_t(owned.width) * owned.height * owned.channels);
    flashps_image_free(&owned);
    return image;
  }
  static Image load(const std::string& path) {
    flashps_image loaded{};
    check(flashps_image_load(path.c_str(), &loaded));
    return adopt(loaded);
  }
  static Image decode(const void* bytes, size_t size, const std::string& name = "image") {
    flashps_image decoded{};
    check(flashps_image_decode(bytes, size, name.c_str(), &decoded));
    return adopt(decoded);
  }
  void save(const std::string& path) const {
    const flashps_image image = view();
    check(flashps_image_save(path.c_str(), &image));
  }
};

enum class CacheMode { automatic = FLASHPS_CACHE_AUTO, full = FLASHPS_CACHE_FULL, kv = FLASHPS_CACHE_KV, hidden = FLASHPS_CACHE_HIDDEN };

inline const char* cache_mode_name(CacheMode mode) {
  switch (mode) {
    case CacheMode::full: return "full";
    case CacheMode::kv: return "kv";
    case CacheMode::hidden: return "hidden";
    default: return "auto";
  }
}
// "auto", "full", "kv", "hidden" (the CLI's --cache and manifests' "cache").
inline CacheMode cache_mode_from_name(const std::string& name) {
  if (name == "auto") return CacheMode::automatic;
  if (name == "full") return CacheMode::full;
  if (name == "kv") return CacheMode::kv;
  if (name == "hidden") return CacheMode::hidden;
  throw Error(FLASHPS_INVALID_ARGUMENT, "unknown cache mode '" + name + "' (auto, full, kv or hidden)");
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
    if (progress) {
      params.progress = detail::progress_trampoline;
      params.user_data = const_cast<ProgressFunction*>(&progress);
    }
    return params;
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
    return stats;
  }
};

struct EditResult {
  Image image;
  EditStats stats;
};

enum class ModelFamily { flux = FLASHPS_FAMILY_FLUX, stable_diffusion = FLASHPS_FAMILY_STABLE_DIFFUSION };

struct ModelInfo {
  ModelFamily family = ModelFamily::flux;
  std::string model_dir, fingerprint, device;
  int native_size = 0, default_steps = 0;
  bool takes_text = false, is_fill = false, unconditional = false, recommends_texture_transfer = false, bf16 = false;

  static ModelInfo from_c(const flashps_model_info& c) {
    ModelInfo info;
    info.family = static_cast<ModelFamily>(c.family);
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

// ---- The activation store ----

struct StoreOptions {
  std::string directory;  // empty: Store::default_directory()
  int64_t host_capacity_bytes = 0;  // 0: 1 GiB
  int64_t disk_quota_bytes = 0;     // 0: unlimited
};

struct CaptureInfo {
  std::string template_hash, model_fingerprint, config;
  int64_t bytes = 0, entries = 0, quarantined = 0;
  double created = 0, last_access = 0;
};

struct StoreStats {
  int64_t captures = 0, entries = 0, bytes = 0, quarantined = 0;
  int64_t segment_files = 0, segment_bytes = 0, host_bytes = 0, host_capacity = 0, disk_quota = 0;
  int64_t recovered_captures = 0, recovered_segments = 0;
};

struct VerifyReport {
  int64_t entries_checked = 0, damaged = 0;
  std::vector<std::string> problems;
};

struct GcReport {
  int removed_captures = 0, removed_segments = 0;
  int64_t reclaimed_bytes = 0;
  std::vector<std::string> notes;
};

// A shared handle: copies refer to the same open store.
class Store {
 public:
  Store() = default;
  static std::string default_directory() { return flashps_store_default_directory(); }
  static Store open(const StoreOptions& options = {}) {
    flashps_store_params params = flashps_store_default_params();
    params.directory = detail::c_str_or_null(options.directory);
    params.host_capacity_bytes = options.host_capacity_bytes;
    params.disk_quota_bytes = options.disk_quota_bytes;
    flashps_store* store = nullptr;
    check(flashps_store_open(&params, &store));
    Store result;
    result.handle_.reset(store, flashps_store_close);
    return result;
  }
  explicit operator bool() const { return static_cast<bool>(handle_); }
  flashps_store* get() const { return handle_.get(); }
  std::string directory() const { return flashps_store_directory(handle_.get()); }

  std::vector<CaptureInfo> list() const {
    std::vector<CaptureInfo> captures;
    check(flashps_store_list(
        handle_.get(),
        [](const flashps_capture_info* c, void* user_data) {
          auto& out = *static_cast<std::vector<CaptureInfo>*>(user_data);
          out.push_back({c->template_hash ? c->template_hash : "", c->model_fingerprint ? c->model_fingerprint : "",
                         c->config ? c->config : "", c->bytes, c->entries, c->quarantined, c->created,
                         c->last_access});
          return 1;
        },
        &captures));
    return captures;
  }
  StoreStats stats() const {
    flashps_store_stats c{};
    c.struct_size = sizeof(c);
    check(flashps_store_get_stats(handle_.get(), &c));
    return {c.captures,    c.entries,       c.bytes,         c.quarantined, c.segment_files, c.segment_bytes,
            c.host_bytes,  c.host_capacity, c.disk_quota,    c.recovered_captures, c.recovered_segments};
  }
  VerifyReport verify(const ProgressFunction& progress = {}) const {
    flashps_verify_report c{};
    c.struct_size = sizeof(c);
    check(flashps_store_verify(handle_.get(), progress ? detail::progress_trampoline : nullptr,
                               const_cast<ProgressFunction*>(&progress), &c));
    return {c.entries_checked, c.damaged, detail::split_lines(c.problems)};
  }
  int64_t evict(int64_t max_bytes) const {
    int64_t freed = 0;
    check(flashps_store_evict(handle_.get(), max_bytes, &freed));
    return freed;
  }
  // Captures removed; throws NOT_FOUND when nothing matches, INVALID_ARGUMENT when the prefix
  // names several templates and all_matching is false.
  int remove(const std::string& prefix, bool all_matching = false) const {
    int removed = 0;
    check(flashps_store_remove(handle_.get(), prefix.c_str(), all_matching ? 1 : 0, &removed));
    return removed;
  }
  GcReport gc() const {
    flashps_gc_report c{};
    c.struct_size = sizeof(c);
    check(flashps_store_gc(handle_.get(), &c));
    return {c.removed_captures, c.removed_segments, c.reclaimed_bytes, detail::split_lines(c.notes)};
  }

 private:
  std::shared_ptr<flashps_store> handle_;
};

// ---- Editors: one model, one edit at a time ----

struct EditorOptions {
  bool bf16 = false;
  std::string device;       // empty: "cpu"; "cuda", "cuda:N", "auto"
  Store store;              // shared store; else capture_dir; else captures in memory
  std::string capture_dir;
  ProgressFunction progress;  // loading progress
};

class Editor {
 public:
  Editor() = default;
  // model_dir empty: default_model_dir().
  static Editor open(const std::string& model_dir = "", const EditorOptions& options = {}) {
    flashps_editor_params params = flashps_editor_default_params();
    params.bf16 = options.bf16 ? 1 : 0;
    params.device = detail::c_str_or_null(options.device);
    params.store = options.store.get();
    params.capture_dir = detail::c_str_or_null(options.capture_dir);
    if (options.progress) {
      params.progress = detail::progress_trampoline;
      params.user_data = const_cast<ProgressFunction*>(&options.progress);
    }
    flashps_editor* editor = nullptr;
    check(flashps_editor_open(detail::c_str_or_null(model_dir), &params, &editor));
    Editor result;
    result.handle_.reset(editor, flashps_editor_close);
    return result;
  }
  explicit operator bool() const { return static_cast<bool>(handle_); }
  flashps_editor* get() const { return handle_.get(); }

  ModelInfo info() const {
    flashps_model_info c{};
    c.struct_size = sizeof(c);
    check(flashps_editor_info(handle_.get(), &c));
    return ModelInfo::from_c(c);
  }
  EditResult edit(const Image& image, const Image& mask, const EditOptions& options = {}) const {
    const flashps_edit_params params = options.to_c();
    const flashps_image c_image = image.view(), c_mask = mask.view();
    flashps_image result{};
    flashps_edit_stats stats = EditStats::empty_c();
    check(flashps_edit(handle_.get(), &c_image, &c_mask, &params, &result, &stats));
    EditStats edit_stats = EditStats::from_c(stats);
    return {Image::adopt(result), std::move(edit_stats)};
  }
  // Runs the template in full and captures it. With a mask: the same window as the edits to come.
  // Without one (the whole image) both kinds are captured: flashps_template_register_masked, the
  // only call that chooses them, needs the mask.
  EditStats register_template(const Image& image, const EditOptions& options = {}, const Image* mask = nullptr,
                              bool capture_kv = true, bool capture_hidden = true) const {
    const flashps_edit_params params = options.to_c();
    const flashps_image c_image = image.view();
    flashps_edit_stats stats = EditStats::empty_c();
    if (mask) {
      const flashps_image c_mask = mask->view();
      check(flashps_template_register_masked(handle_.get(), &c_image, &c_mask, &params, capture_kv ? 1 : 0,
                                             capture_hidden ? 1 : 0, &stats));
    } else if (capture_kv && capture_hidden) {
      check(flashps_template_register(handle_.get(), &c_image, &params, &stats));
    } else {
      throw Error(FLASHPS_INVALID_ARGUMENT,
                  "register_template: capturing only keys/values or only block outputs needs the mask of the "
                  "edits to come");
    }
    return EditStats::from_c(stats);
  }
  // Whether edit(image, mask, options) would reuse a registered template.
  bool has_template(const Image& image, const Image& mask, const EditOptions& options = {}) const {
    const flashps_edit_params params = options.to_c();
    const flashps_image c_image = image.view(), c_mask = mask.view();
    int found = 0;
    check(flashps_template_lookup(handle_.get(), &c_image, &c_mask, &params, &found));
    return found != 0;
  }

 private:
  std::shared_ptr<flashps_editor> handle_;
};

// ---- The serving engine ----

enum class Batching { cb = FLASHPS_BATCHING_CB, naive_cb = FLASHPS_BATCHING_NAIVE_CB, static_batch = FLASHPS_BATCHING_STATIC,
                      static_full = FLASHPS_BATCHING_STATIC_FULL };
// "cb", "naive-cb", "static", "static-full"
inline Batching batching_from_name(const std::string& name) {
  if (name == "cb") return Batching::cb;
  if (name == "naive-cb") return Batching::naive_cb;
  if (name == "static") return Batching::static_batch;
  if (name == "static-full") return Batching::static_full;
  throw Error(FLASHPS_INVALID_ARGUMENT, "unknown batching '" + name + "' (cb, naive-cb, static or static-full)");
}

enum class BalancePolicy { mask_aware = FLASHPS_BALANCE_MASK_AWARE, round_robin = FLASHPS_BALANCE_ROUND_ROBIN,
                           request_count = FLASHPS_BALANCE_REQUEST_COUNT, token_count = FLASHPS_BALANCE_TOKEN_COUNT };

struct EngineOptions {
  std::string devices;  // empty: "cpu"
  bool bf16 = false;
  Store store;
  std::string capture_dir;
  Batching batching = Batching::cb;
  BalancePolicy policy = BalancePolicy::mask_aware;
  int max_batch = 0;       // 0: 8
  size_t max_queued = 0;   // 0: 64
  int pool_threads = 0;    // 0: 1
  std::string profile_path;
  ProgressFunction progress;  // loading
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
    if (options.progress) {
      params.progress = detail::progress_trampoline;
      params.user_data = const_cast<ProgressFunction*>(&options.progress);
    }
    flashps_engine* engine = nullptr;
    check(flashps_engine_open(detail::c_str_or_null(model_dir), &params, &engine));
    Engine result;
    result.handle_.reset(engine, flashps_engine_close);
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
    check(flashps_engine_run_batch(handle_.get(), manifest_path.c_str(), &params, &c));
    return {c.total, c.done, c.skipped, c.failed, c.cancelled, c.cache_hits, c.seconds, c.throughput,
            detail::split_lines(c.notes)};
  }

 private:
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

struct Rect {
  int32_t x = 0, y = 0, width = 0, height = 0;
  bool empty() const { return width <= 0 || height <= 0; }
  static Rect from_c(const flashps_rect& r) { return {r.x, r.y, r.width, r.height}; }
  flashps_rect to_c() const { return {x, y, width, height}; }
};

struct Brush {
  double diameter = 32, hardness = 0.8, spacing = 0.15;
  bool erase = false;
  flashps_brush to_c() const {
    flashps_brush brush = flashps_brush_default();
    brush.diameter = diameter;
    brush.hardness = hardness;
    brush.erase = erase ? 1 : 0;
    brush.spacing = spacing;
    return brush;
  }
};

struct Point {
  double x = 0, y = 0;
};

// A stroke painting into `mask` (1 channel); the mask's pixels must not be reallocated meanwhile.
class MaskStroke {
 public:
  MaskStroke(Image& mask, const Brush& brush, double x, double y) {
    flashps_image view = mask.view();
    const flashps_brush c_brush = brush.to_c();
    flashps_mask_stroke* stroke = nullptr;
    flashps_rect changed{};
    check(flashps_mask_stroke_begin(&view, &c_brush, x, y, &stroke, &changed));
    handle_.reset(stroke);
    first_ = Rect::from_c(changed);
  }
  Rect first_dab() const { return first_; }
  Rect extend(double x, double y) {
    flashps_rect changed{};
    check(flashps_mask_stroke_extend(handle_.get(), x, y, &changed));
    return Rect::from_c(changed);
  }
  // Everything the stroke touched; the stroke is finished.
  Rect end() {
    flashps_rect changed{};
    flashps_mask_stroke_end(handle_.release(), &changed);
    return Rect::from_c(changed);
  }

 private:
  struct Deleter {
    void operator()(flashps_mask_stroke* stroke) const { flashps_mask_stroke_end(stroke, nullptr); }
  };
  std::unique_ptr<flashps_mask_stroke, Deleter> handle_;
  Rect first_;
};

namespace mask {
// The SDK's rule for what an image means as a mask (luma x alpha), as a 1-channel image.
inline Image from_image(const Image& image) {
  const flashps_image view = image.view();
  flashps_image out{};
  check(flashps_mask_from_image(&view, &out));
  return Image::adopt(out);
}
inline Rect fill_rect(Image& mask, const Rect& rect, uint8_t value) {
  flashps_image view = mask.view();
  flashps_rect changed{};
  check(flashps_mask_fill_rect(&view, rect.to_c(), value, &changed));
  return Rect::from_c(changed);
}
inline Rect fill_polygon(Image& mask, const std::vector<Point>& polygon, uint8_t value) {
  std::vector<double> points;
  points.reserve(polygon.size() * 2);
  for (const Point& point : polygon) {
    points.push_back(point.x);
    points.push_back(point.y);
  }
  flashps_image view = mask.view();
  flashps_rect changed{};
  check(flashps_mask_fill_polygon(&view, points.data(), polygon.size(), value, &changed));
  return Rect::from_c(changed);
}
inline void invert(Image& mask) {
  flashps_image view = mask.view();
  check(flashps_mask_invert(&view));
}
inline void clear(Image& mask) {
  flashps_image view = mask.view();
  check(flashps_mask_clear(&view));
}
inline void fill(Image& mask) {
  flashps_image view = mask.view();
  check(flashps_mask_fill(&view));
}
inline Image effective(const Image& mask, int grow_pixels, int feather_pixels) {
  const flashps_image view = mask.view();
  flashps_image out{};
  check(flashps_mask_effective(&view, grow_pixels, feather_pixels, &out));
  return Image::adopt(out);
}
inline Rect bounds(const Image& mask) {
  const flashps_image view = mask.view();
  flashps_rect box{};
  check(flashps_mask_bounds(&view, &box));
  return Rect::from_c(box);
}
}  // namespace mask

}  // namespace flashps::sdk

#endif  // FLASHPS_FLASHPS_HPP
