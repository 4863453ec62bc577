#include "terminal_progress.h"

#include <unistd.h>

#include <cstdio>
#include <string>

namespace flashps::cli {

ProgressCallback terminal_progress(bool quiet) {
  if (quiet || !::isatty(STDERR_FILENO)) return nullptr;
  return [](const ProgressEvent& event) {
    constexpr int kWidth = 30;
    const int total = event.total_steps > 0 ? event.total_steps : 1;
    const int filled = event.step * kWidth / total;
    std::string bar(kWidth, ' ');
    for (int i = 0; i < filled; ++i) bar[i] = '=';
    if (filled < kWidth) bar[filled] = '>';
    const double per_step = event.step > 0 ? event.stage_seconds / event.step : 0.0;
    std::fprintf(stderr, "\r%-8s %3d/%-3d [%s] %.2f s/it", event.stage.c_str(), event.step,
                 event.total_steps, bar.c_str(), per_step);
    std::fflush(stderr);
    return true;
  };
}

void finish_progress_line(bool quiet) {
  if (!quiet && ::isatty(STDERR_FILENO)) std::fprintf(stderr, "\n");
}

}  // namespace flashps::cli
