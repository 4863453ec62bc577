// Process-wide runtime set-up: LibTorch's thread count (it defaults to one here) and a malloc
// configuration that keeps freed memory instead of returning LibTorch's large buffers to the OS
// after every op (page faults otherwise dominate CPU run time).
#pragma once

namespace flashps {

struct RuntimeOptions {
  int num_threads = 0;           // 0: all hardware threads
  bool keep_freed_memory = true;  // mallopt tuning; off to measure the default allocator
};

// Front ends call it (through flashps_init) before the first model runs; the SDK never does on
// its own, so a program embedding the library keeps its process-wide settings unless it asks.
// May be called again: a new thread count applies; the malloc tuning is never undone here.
void init_runtime(const RuntimeOptions& options = {});
int runtime_threads();

// Switches the malloc tuning on or off at run time (benchmarks compare both).
void set_keep_freed_memory(bool keep);

}  // namespace flashps
