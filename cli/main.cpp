#include <iostream>

#include "commands.h"
#include "core/error.h"
#include "core/runtime.h"

int main(int argc, char** argv) {
  CLI::App app{"flashps: fast mask-aware generative image editing"};
  app.require_subcommand(1);
  int threads = 0;
  app.add_option("--threads", threads, "CPU threads (default: all cores, or FLASHPS_THREADS)");
  flashps::cli::CommandAction action;
  flashps::cli::add_edit_command(app, action);
  flashps::cli::add_template_commands(app, action);
  flashps::cli::add_bench_commands(app, action);
  flashps::cli::add_cache_commands(app, action);
  flashps::cli::add_serve_commands(app, action);
  flashps::cli::add_profile_command(app, action);
  flashps::cli::add_dev_commands(app, action);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  try {
    flashps::RuntimeOptions options;
    options.num_threads = threads;
    flashps::init_runtime(options);
    return action ? action() : 0;
  } catch (const flashps::Cancelled&) {
    std::cerr << "flashps: cancelled\n";
    return 130;
  } catch (const std::exception& error) {
    std::cerr << "flashps: error: " << error.what() << "\n";
    return 1;
  }
}
