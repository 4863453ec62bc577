// The command-line frame shared by flashps and flashps-bench: --threads, the SDK's log lines on
// stderr ("flashps: note: ..." for warnings, e.g. the random-weight model fallback) applied once
// through flashps::sdk::init, and one mapping of errors to exit codes.
#pragma once
#include <functional>
#include <string>

namespace CLI {
class App;
}

namespace flashps::cli {

// threads_option: --threads as given ("" or "0": FLASHPS_THREADS, else every core). A malformed
// count, or one the SDK refuses (above 4x the cores), throws std::invalid_argument naming
// --threads; a malformed FLASHPS_THREADS (used without --threads) throws the SDK's error naming it.
void init_sdk(const std::string& threads_option);

// Adds --threads to `app`, parses argv (usage errors: CLI11's message and exit code), initialises
// the SDK, then runs `action` (set by the chosen subcommand while parsing). Returns the exit
// code: the action's, 130 when cancelled (an sdk::Error with FLASHPS_CANCELLED), 1 with
// "flashps: error: ..." on stderr for any other exception.
int run_command_line(CLI::App& app, int argc, char** argv, const std::function<int()>& action);

}  // namespace flashps::cli
