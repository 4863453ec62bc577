#include "core/runtime/runtime.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <malloc.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include "core/diagnostics/error.h"

namespace flashps {
namespace {
std::mutex runtime_mutex;
int configured_threads = 0;
}  // namespace

int hardware_threads() {
  const unsigned count = std::thread::hardware_concurrency();
  return count > 0 ? static_cast<int>(count) : 1;
}

int max_threads() { return 4 * hardware_threads(); }

int threads_from_environment() {
  const char* env = std::getenv("FLASHPS_THREADS");
  if (!env || !*env) return 0;
  const std::string text(env);
  bool digits = text.size() <= 9;
  for (const char c : text) digits = digits && c >= '0' && c <= '9';
  const int value = digits ? std::stoi(text) : 0;
  if (value < 1 || value > max_threads())
    throw InvalidArgumentError("FLASHPS_THREADS is \"" + text + "\"; it must be a whole number from 1 to " +
                               std::to_string(max_threads()) + " (4 x the " + std::to_string(hardware_threads()) +
                               " hardware threads), or unset for every core");
  return value;
}

void init_runtime(const RuntimeOptions& options) {
  if (options.num_threads < 0 || options.num_threads > max_threads())
    throw InvalidArgumentError("thread count " + std::to_string(options.num_threads) + "; it must be 0 to " +
                               std::to_string(max_threads()) + " (4 x the " + std::to_string(hardware_threads()) +
                               " hardware threads)");
  int threads = options.num_threads > 0 ? options.num_threads : threads_from_environment();
  if (threads == 0) threads = hardware_threads();
  std::lock_guard<std::mutex> lock(runtime_mutex);
  if (threads != configured_threads) {
    // Flush denormals to zero: softmax over wide score ranges otherwise produces denormals that
    // the CPU handles in microcode, many times slower. Set before the pool threads start, so
    // they inherit it.
    at::globalContext().setFlushDenormal(true);
    at::set_num_threads(threads);
    configured_threads = threads;
  }
  if (options.keep_freed_memory) set_keep_freed_memory(true);
}

void set_keep_freed_memory(bool keep) {
#ifdef __GLIBC__
  if (keep) {
    // Large tensors would otherwise be mmap'ed and unmapped on every op (each use page-faults
    // afresh). M_MMAP_THRESHOLD cannot exceed 32 MiB, so serve every size from the heap instead
    // (M_MMAP_MAX 0) and keep up to 1 GiB of freed memory there rather than trimming it.
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_TOP_PAD, 64 << 20);
  } else {  // glibc's defaults
    mallopt(M_MMAP_MAX, 65536);
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    mallopt(M_TRIM_THRESHOLD, 128 * 1024);
    mallopt(M_TOP_PAD, 0);
    malloc_trim(0);
  }
#else
  (void)keep;
#endif
}

int runtime_threads() {
  std::lock_guard<std::mutex> lock(runtime_mutex);
  return configured_threads;
}

}  // namespace flashps
