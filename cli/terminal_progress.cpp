#include "terminal_progress.h"

#include <unistd.h>

#include <cstdio>
#include <string>

namespace flashps::cli {

sdk::ProgressFunction terminal_progress(bool quiet) {
  if (quiet || !::isatty(STDERR_FILENO)) return {};
  return [](const std::string& stage, int step, int total_steps, double stage_seconds) {
    constexpr int kWidth = 30;
    const int total = total_steps > 0 ? total_steps : 1;
    const int filled = step * kWidth / total;
    std::string bar(kWidth, ' ');
    for (int i = 0; i < filled && i < kWidth; ++i) bar[i] = '=';
    if (filled >= 0 && filled < kWidth) bar[filled] = '>';
    const double per_step = step > 0 ? stage_seconds / step : 0.0;
    std::fprintf(stderr, "\r%-8s %3d/%-3d [%s] %.2f s/it", stage.c_str(), step, total_steps, bar.c_str(), per_step);
    std::fflush(stderr);
    return true;
  };
}

void finish_progress_line(bool quiet) {
  if (!quiet && ::isatty(STDERR_FILENO)) std::fprintf(stderr, "\n");
}

}  // namespace flashps::cli
