#include "core/runtime.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <malloc.h>

#include <cstdlib>
#include <mutex>
#include <thread>

namespace flashps {
namespace {
std::mutex runtime_mutex;
int configured_threads = 0;
}  // namespace

void init_runtime(const RuntimeOptions& options) {
  std::lock_guard<std::mutex> lock(runtime_mutex);
  int threads = options.num_threads;
  if (threads <= 0) {
    if (const char* env = std::getenv("FLASHPS_THREADS")) threads = std::atoi(env);
  }
  if (threads <= 0) threads = static_cast<int>(std::thread::hardware_concurrency());
  if (threads <= 0) threads = 1;
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
