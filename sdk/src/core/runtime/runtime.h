// Process-wide runtime set-up: LibTorch's thread count (it defaults to one here) and a malloc
// configuration that keeps freed memory instead of returning LibTorch's large buffers to the OS
// after every op (page faults otherwise dominate CPU run time).
#pragma once

namespace flashps {

struct RuntimeOptions {
  int num_threads = 0;           // 0: FLASHPS_THREADS, else all hardware threads
  bool keep_freed_memory = true;  // mallopt tuning; off to measure the default allocator
};

// Front ends call it (through flashps_init) before the first model runs; the SDK never does on
// its own, so a program embedding the library keeps its process-wide settings unless it asks.
// May be called again: a new thread count applies; the malloc tuning is never undone here.
// Throws InvalidArgumentError for a count outside 0..max_threads() or a malformed FLASHPS_THREADS.
void init_runtime(const RuntimeOptions& options = {});
int runtime_threads();

// The machine's hardware threads (at least 1), and the most a caller may ask for: 4x that (more
// only oversubscribes the cores, and a typo like 9999 would stall creating threads).
int hardware_threads();
int max_threads();

// FLASHPS_THREADS parsed strictly: 0 when unset or empty, else a whole number from 1 to
// max_threads(); anything else throws InvalidArgumentError naming the variable and the range.
int threads_from_environment();

// Switches the malloc tuning on or off at run time (benchmarks compare both).
void set_keep_freed_memory(bool keep);

}  // namespace flashps
