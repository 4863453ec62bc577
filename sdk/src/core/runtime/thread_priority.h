// Lowering the scheduling priority of the calling thread, so compute threads yield a core to the
// threads that answer people (an HTTP server's connections, a UI) when both want one. On Linux
// the nice value is per thread and threads inherit it from the thread that creates them, so
// lowering a worker before its first tensor op also lowers its OpenMP team and loader threads.
#pragma once

namespace flashps {

// Raises the calling thread's nice value by `increment` (0: no change; capped at 19, the
// lowest priority). Raising needs no privilege. Returns false (and changes nothing) where the
// platform has no per-thread priority or the call fails.
bool lower_thread_priority(int increment);

// The calling thread's nice value (0 where unknown).
int thread_nice_value();

}  // namespace flashps
