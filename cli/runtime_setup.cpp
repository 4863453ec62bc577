#include "runtime_setup.h"

#include <CLI/CLI.hpp>
#include <flashps/flashps.hpp>

#include <cctype>
#include <iostream>
#include <stdexcept>

namespace flashps::cli {
namespace {

// Only the form is checked here (digits, no overflow); the SDK owns the allowed range.
int parse_thread_count(const std::string& text) {
  if (text.empty()) return 0;
  bool digits = text.size() <= 9;
  for (const char c : text) digits = digits && std::isdigit(static_cast<unsigned char>(c));
  if (!digits)
    throw std::invalid_argument("--threads: '" + text + "' is not a thread count (a whole number, 0 for the default)");
  return std::stoi(text);
}

void print_log_line(flashps_log_level level, const std::string& message) {
  std::cerr << (level >= FLASHPS_LOG_ERROR ? "flashps: error: " : "flashps: note: ") << message << "\n";
}

}  // namespace

void init_sdk(const std::string& threads_option) {
  sdk::RuntimeOptions runtime;
  runtime.threads = parse_thread_count(threads_option);
  runtime.log = print_log_line;
  try {
    sdk::init(runtime);
  } catch (const sdk::Error& error) {
    // --threads is the only setting taken from the command line; the SDK names the allowed range.
    // Without it the refused value is FLASHPS_THREADS, which the SDK's message names.
    if (error.status() != FLASHPS_INVALID_ARGUMENT || runtime.threads == 0) throw;
    throw std::invalid_argument("--threads " + threads_option + ": " + error.what());
  }
}

int run_command_line(CLI::App& app, int argc, char** argv, const std::function<int()>& action) {
  std::string threads;
  app.add_option("--threads", threads,
                 "CPU threads, up to 4x the cores (default or 0: FLASHPS_THREADS, else all cores)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  try {
    init_sdk(threads);
    return action ? action() : 0;
  } catch (const sdk::Error& error) {
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

}  // namespace flashps::cli
