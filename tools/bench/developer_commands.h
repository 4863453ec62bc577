// flashps-bench's subcommands (benchmarks, the fixture runner, device profiling): developer tools
// that reach the SDK's internals, outside the shipped library. Each registers itself on the CLI11
// app; main() runs the chosen one.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "core/diagnostics/progress.h"

namespace flashps::bench_tool {

// The action to run after parsing; returns the process exit code.
using CommandAction = std::function<int()>;

void add_bench_commands(CLI::App& app, CommandAction& action);
void add_dev_commands(CLI::App& app, CommandAction& action);
void add_profile_command(CLI::App& app, CommandAction& action);
// `bench quant-linear` (quant_linear_command.cpp), registered under `bench`.
void add_quant_linear_command(CLI::App& bench, CommandAction& action);

// --model: the folder given, else the SDK's default model (the bundled one; the random-weight
// fallback is logged as a warning).
std::string model_dir(const std::string& model_option);

// The CLI's terminal progress bar (cli/terminal_progress.h) as an internal ProgressCallback.
ProgressCallback terminal_progress(bool quiet);
void finish_progress_line(bool quiet);

}  // namespace flashps::bench_tool
