// A progress bar for long SDK operations: "denoise  12/28 [=======>      ] 0.41 s/it" on a
// terminal, nothing when stderr is not a TTY or --quiet was given. flashps-bench draws its bars
// with it too (through an adapter), so there is one copy.
#pragma once
#include <flashps/flashps.hpp>

namespace flashps::cli {

// An empty function when there is nothing to draw (so callers pass no callback at all).
sdk::ProgressFunction terminal_progress(bool quiet);
// Ends the bar's line (the bar redraws one line with '\r').
void finish_progress_line(bool quiet);

}  // namespace flashps::cli
