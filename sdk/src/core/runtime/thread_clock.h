// Clocks for timing phases. thread_cpu_seconds: CPU time of the calling thread; overheads
// measured this way exclude the time the thread was preempted, which on a small shared machine
// otherwise dominates sub-millisecond measurements.
#pragma once
#include <chrono>
#include <ctime>

namespace flashps {

// Wall-clock seconds from `start` to now (steady clock).
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

inline double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return double(now.tv_sec) + 1e-9 * double(now.tv_nsec);
}

}  // namespace flashps
