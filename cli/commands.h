// Each subcommand registers itself on the CLI11 app; main() runs the chosen one. Commands use
// only the public C++ wrapper <flashps/flashps.hpp> (cli/CMakeLists.txt enforces it).
#pragma once
#include <CLI/CLI.hpp>
#include <functional>

namespace flashps::cli {

// The action to run after parsing; returns the process exit code.
using CommandAction = std::function<int()>;

void add_edit_command(CLI::App& app, CommandAction& action);
void add_template_commands(CLI::App& app, CommandAction& action);
void add_cache_commands(CLI::App& app, CommandAction& action);
void add_batch_command(CLI::App& app, CommandAction& action);
void add_serve_command(CLI::App& app, CommandAction& action);
void add_plugin_commands(CLI::App& app, CommandAction& action);
void add_model_commands(CLI::App& app, CommandAction& action);

}  // namespace flashps::cli
