// flashps-bench: FlashPS's developer tools (benchmarks, the golden-fixture runner, device
// profiling). They use the SDK's internals, so they live outside the shipped library and the
// public CLI; `flashps bench|dev|profile ...` execs this program with the same arguments.
#include <string>

#include "app/default_model.h"
#include "core/diagnostics/error.h"
#include "developer_commands.h"
#include "runtime_setup.h"
#include "terminal_progress.h"

namespace flashps::bench_tool {

std::string model_dir(const std::string& model_option) {
  return model_option.empty() ? app::default_model().dir : model_option;
}

ProgressCallback terminal_progress(bool quiet) {
  sdk::ProgressFunction bar = cli::terminal_progress(quiet);
  if (!bar) return nullptr;
  return [bar = std::move(bar)](const ProgressEvent& event) {
    return bar(event.stage, event.step, event.total_steps, event.stage_seconds);
  };
}

void finish_progress_line(bool quiet) { cli::finish_progress_line(quiet); }

}  // namespace flashps::bench_tool

int main(int argc, char** argv) {
  CLI::App app{"flashps-bench: FlashPS developer tools (also run as `flashps bench|dev|profile`)"};
  app.require_subcommand(1);
  flashps::bench_tool::CommandAction action;
  flashps::bench_tool::add_bench_commands(app, action);
  flashps::bench_tool::add_dev_commands(app, action);
  flashps::bench_tool::add_profile_command(app, action);
  // The tools throw the SDK's internal Cancelled; the shared frame knows the public status.
  return flashps::cli::run_command_line(app, argc, argv, [&action]() -> int {
    if (!action) return 0;
    try {
      return action();
    } catch (const flashps::Cancelled&) {
      throw flashps::sdk::Error(FLASHPS_CANCELLED, "cancelled");
    }
  });
}
