#include "core/runtime/thread_priority.h"

#include <algorithm>
#include <cerrno>

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace flashps {

#if defined(__linux__)
namespace {
// PRIO_PROCESS with a thread id addresses that one thread on Linux (not POSIX: elsewhere it
// would lower the whole process, so other platforms do nothing).
id_t calling_thread_id() { return static_cast<id_t>(syscall(SYS_gettid)); }
}  // namespace

int thread_nice_value() {
  errno = 0;
  const int nice = getpriority(PRIO_PROCESS, calling_thread_id());
  return errno == 0 ? nice : 0;
}

bool lower_thread_priority(int increment) {
  if (increment <= 0) return increment == 0;
  const int target = std::min(19, thread_nice_value() + increment);
  return setpriority(PRIO_PROCESS, calling_thread_id(), target) == 0;
}
#else
int thread_nice_value() { return 0; }
bool lower_thread_priority(int increment) { return increment == 0; }
#endif

}  // namespace flashps
