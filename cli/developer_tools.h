// `flashps bench|dev|profile ...` reach the SDK's internals, so they live in a separate
// executable, flashps-bench (tools/bench). The CLI forwards them git-style: it execs
// flashps-bench with the same arguments, found next to the running flashps, else on PATH.
#pragma once
#include <CLI/CLI.hpp>

#include "commands.h"

namespace flashps::cli {

// The developer command argv names (after the global options, e.g. --threads 2 bench ...), or
// nullptr.
const char* developer_command(int argc, char** argv);

// Replaces this process with flashps-bench given argv[1..]; returns only on failure, after
// printing why (not installed, not executable), with exit code 1.
int forward_to_developer_tool(int argc, char** argv);

// Lists bench, dev and profile in `flashps --help`; running one forwards it.
void add_developer_commands(CLI::App& app, CommandAction& action, int argc, char** argv);

}  // namespace flashps::cli
