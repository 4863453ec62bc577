// flashps/common.h: versions, status names, the calling thread's last error, and flashps_init —
// the only place the library changes process-wide settings (threads, malloc, logging).
#include <ATen/Parallel.h>

#include <string>

#include "api/abi_layout.h"
#include "api/api_support.h"
#include "api/c_enum.h"
#include "core/diagnostics/log.h"
#include "core/runtime/runtime.h"
#include "flashps/flashps.h"

#ifndef FLASHPS_VERSION_STRING
#error "FLASHPS_VERSION_STRING (the CMake project version) must be defined for the SDK (sdk/CMakeLists.txt)"
#endif

namespace {

using flashps::api::invalid;

flashps::log::Sink c_log_sink(flashps_log_callback callback, void* user_data) {
  if (!callback) return {};
  return [callback, user_data](flashps::log::Level level, const std::string& message) {
    callback(static_cast<flashps_log_level>(level), message.c_str(), user_data);
  };
}

}  // namespace

extern "C" {

const char* flashps_status_name(flashps_status status) {
  switch (status) {
    case FLASHPS_OK: return "FLASHPS_OK";
    case FLASHPS_ERROR: return "FLASHPS_ERROR";
    case FLASHPS_CANCELLED: return "FLASHPS_CANCELLED";
    case FLASHPS_INVALID_ARGUMENT: return "FLASHPS_INVALID_ARGUMENT";
    case FLASHPS_NOT_FOUND: return "FLASHPS_NOT_FOUND";
    case FLASHPS_IO_ERROR: return "FLASHPS_IO_ERROR";
    case FLASHPS_CORRUPT_DATA: return "FLASHPS_CORRUPT_DATA";
    case FLASHPS_OUT_OF_MEMORY: return "FLASHPS_OUT_OF_MEMORY";
    case FLASHPS_UNSUPPORTED: return "FLASHPS_UNSUPPORTED";
    case FLASHPS_REJECTED: return "FLASHPS_REJECTED";
    case FLASHPS_DEADLINE_EXCEEDED: return "FLASHPS_DEADLINE_EXCEEDED";
  }
  return "FLASHPS_UNKNOWN_STATUS";
}

const char* flashps_last_error(void) { return flashps::api::last_error(); }
int flashps_api_version(void) { return FLASHPS_API_VERSION; }
int flashps_abi_version(void) { return FLASHPS_ABI_VERSION; }
const char* flashps_version_string(void) { return FLASHPS_VERSION_STRING; }

flashps_runtime_options flashps_runtime_default_options(void) {
  flashps_runtime_options options{};
  options.struct_size = sizeof(options);
  options.threads = 0;
  options.keep_freed_memory = 1;
  options.log = nullptr;
  options.log_user_data = nullptr;
  options.log_level = FLASHPS_LOG_WARNING;
  return options;
}

flashps_status flashps_init(const flashps_runtime_options* given) {
  const char* const function = "flashps_init";
  flashps_runtime_options options = flashps_runtime_default_options();
  if (!flashps::api::read_params(given, flashps::api::kRuntimeOptionsV2Size, options, function,
                                 "flashps_runtime_options"))
    return FLASHPS_INVALID_ARGUMENT;
  const int log_level = flashps::api::c_enum_value(options.log_level);
  if (log_level < FLASHPS_LOG_DEBUG || log_level > FLASHPS_LOG_ERROR)
    return invalid(function, "flashps_runtime_options.log_level is " + std::to_string(log_level) +
                                 "; it must be FLASHPS_LOG_DEBUG (0) to FLASHPS_LOG_ERROR (3)");
  using flashps::hardware_threads;
  using flashps::max_threads;
  if (options.threads < 0 || options.threads > max_threads())
    return invalid(function, "flashps_runtime_options.threads is " + std::to_string(options.threads) +
                                 "; it must be 0 (FLASHPS_THREADS, else every core) to " +
                                 std::to_string(max_threads()) + " (4 x the " + std::to_string(hardware_threads()) +
                                 " hardware threads)");
  return flashps::api::guarded([&] {
    // Logging first, so warnings about the other settings reach the caller's sink.
    flashps::log::configure(c_log_sink(options.log, options.log_user_data),
                            static_cast<flashps::log::Level>(log_level));
    flashps::RuntimeOptions runtime;
    runtime.num_threads = options.threads;  // 0: FLASHPS_THREADS (a malformed value is refused), else every core
    runtime.keep_freed_memory = options.keep_freed_memory != 0;
    flashps::init_runtime(runtime);
  });
}

int flashps_threads(void) { return at::get_num_threads(); }

}  // extern "C"
