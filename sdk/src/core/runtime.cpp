#include "core/runtime.h"

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
    at::set_num_threads(threads);
    configured_threads = threads;
  }
#ifdef __GLIBC__
  if (options.keep_freed_memory) {
    // Large tensors would otherwise be mmap'ed and unmapped on every op (each use page-faults
    // afresh). M_MMAP_THRESHOLD cannot exceed 32 MiB, so serve every size from the heap instead
    // (M_MMAP_MAX 0) and keep up to 1 GiB of freed memory there rather than trimming it.
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_TOP_PAD, 64 << 20);
  }
#endif
}

int runtime_threads() {
  std::lock_guard<std::mutex> lock(runtime_mutex);
  return configured_threads;
}

}  // namespace flashps
