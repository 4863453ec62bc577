#include "runtime_setup.h"

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
    if (error.status() != FLASHPS_INVALID_ARGUMENT) throw;
    throw std::invalid_argument("--threads " + threads_option + ": " + error.what());
  }
}

}  // namespace flashps::cli
