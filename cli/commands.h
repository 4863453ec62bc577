// Each subcommand registers itself on the CLI11 app; main() runs the chosen one.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>

namespace flashps::cli {

// The action to run after parsing; returns the process exit code.
using CommandAction = std::function<int()>;

void add_dev_commands(CLI::App& app, CommandAction& action);
void add_edit_command(CLI::App& app, CommandAction& action);
void add_template_commands(CLI::App& app, CommandAction& action);
void add_bench_commands(CLI::App& app, CommandAction& action);
void add_cache_commands(CLI::App& app, CommandAction& action);
void add_serve_commands(CLI::App& app, CommandAction& action);  // batch
void add_profile_command(CLI::App& app, CommandAction& action);

}  // namespace flashps::cli
