// Progress reporting and cancellation for every long operation (denoising loops, captures,
// benchmarks). A callback returns false to ask the operation to stop; the operation then throws
// flashps::Cancelled at its next check point.
#pragma once
#include <functional>
#include <string>

#include "core/diagnostics/error.h"

namespace flashps {

struct ProgressEvent {
  std::string stage;  // "encode", "denoise", "decode", "capture", ...
  int step = 0;       // steps completed so far in this stage
  int total_steps = 0;
  double stage_seconds = 0;  // wall time spent in this stage so far
};

using ProgressCallback = std::function<bool(const ProgressEvent&)>;

// Calls the callback (if any) and throws Cancelled if it asks to stop.
inline void report_progress(const ProgressCallback& callback, const ProgressEvent& event) {
  if (callback && !callback(event)) throw Cancelled();
}

}  // namespace flashps
