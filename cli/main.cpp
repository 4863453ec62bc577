#include <flashps/flashps.hpp>

#include "commands.h"
#include "developer_tools.h"
#include "runtime_setup.h"

int main(int argc, char** argv) {
  if (flashps::cli::developer_command(argc, argv)) return flashps::cli::forward_to_developer_tool(argc, argv);
  CLI::App app{"flashps: fast mask-aware generative image editing"};
  app.require_subcommand(1);
  flashps::cli::CommandAction action;
  flashps::cli::add_edit_command(app, action);
  flashps::cli::add_template_commands(app, action);
  flashps::cli::add_cache_commands(app, action);
  flashps::cli::add_batch_command(app, action);
  flashps::cli::add_serve_command(app, action);
  flashps::cli::add_plugin_commands(app, action);
  flashps::cli::add_model_commands(app, action);
  flashps::cli::add_developer_commands(app, action, argc, argv);
  return flashps::cli::run_command_line(app, argc, argv, action);
}
