// Process-wide settings from the command line, shared by flashps and flashps-bench: --threads
// and the SDK's log lines on stderr ("flashps: note: ..." for warnings, e.g. the random-weight
// model fallback), applied once through flashps::sdk::init.
#pragma once
#include <string>

namespace flashps::cli {

// threads_option: --threads as given ("" or "0": FLASHPS_THREADS, else every core). A malformed
// count, or one the SDK refuses (above 4x the cores), throws std::invalid_argument naming
// --threads.
void init_sdk(const std::string& threads_option);

}  // namespace flashps::cli
