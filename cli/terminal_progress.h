// A progress bar for long SDK operations: "denoise  12/28 [=======>      ] 0.41 s/it" on a
// terminal, nothing when stderr is not a TTY or --quiet was given.
#pragma once
#include "core/progress.h"

namespace flashps::cli {

ProgressCallback terminal_progress(bool quiet);
void finish_progress_line(bool quiet);

}  // namespace flashps::cli
