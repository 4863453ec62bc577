#include <flashps/flashps.hpp>

#include <iostream>
#include <string>

#include "commands.h"
#include "developer_tools.h"
#include "runtime_setup.h"

int main(int argc, char** argv) {
  if (flashps::cli::developer_command(argc, argv)) return flashps::cli::forward_to_developer_tool(argc, argv);
  CLI::App app{"flashps: fast mask-aware generative image editing"};
  app.require_subcommand(1);
  std::string threads;
  app.add_option("--threads", threads,
                 "CPU threads, up to 4x the cores (default or 0: FLASHPS_THREADS, else all cores)");
  flashps::cli::CommandAction action;
  flashps::cli::add_edit_command(app, action);
  flashps::cli::add_template_commands(app, action);
  flashps::cli::add_cache_commands(app, action);
  flashps::cli::add_batch_command(app, action);
  flashps::cli::add_developer_commands(app, action, argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  try {
    flashps::cli::init_sdk(threads);
    return action ? action() : 0;
  } catch (const flashps::sdk::Error& error) {
    if (error.status() == FLASHPS_CANCELLED) {
      std::cerr << "flashps: cancelled\n";
      return 130;
    }
    std::cerr << "flashps: error: " << error.what() << "\n";
    return 1;
  } catch (const std::exception& error) {
    std::cerr << "flashps: error: " << error.what() << "\n";
    return 1;
  }
}
