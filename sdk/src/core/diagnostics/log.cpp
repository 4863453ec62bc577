#include "core/diagnostics/log.h"

#include <cstdio>
#include <memory>
#include <mutex>

namespace flashps::log {
namespace {

struct Config {
  Sink sink;  // empty: stderr
  Level min_level = Level::warning;
};

std::mutex config_mutex;
std::shared_ptr<const Config> current = std::make_shared<const Config>();

std::shared_ptr<const Config> snapshot() {
  std::lock_guard<std::mutex> lock(config_mutex);
  return current;
}

}  // namespace

const char* level_name(Level level) {
  switch (level) {
    case Level::debug: return "debug";
    case Level::info: return "info";
    case Level::warning: return "warning";
    case Level::error: return "error";
  }
  return "unknown";
}

void configure(Sink sink, Level min_level) {
  auto config = std::make_shared<Config>();
  config->sink = std::move(sink);
  config->min_level = min_level;
  std::lock_guard<std::mutex> lock(config_mutex);
  current = std::move(config);
}

void reset() { configure({}, Level::warning); }

void write(Level level, const std::string& message) {
  // The sink runs outside the lock (a snapshot keeps it alive), so a sink may log or reconfigure.
  const std::shared_ptr<const Config> config = snapshot();
  if (level < config->min_level) return;
  if (config->sink) {
    config->sink(level, message);
    return;
  }
  // One fprintf per line: stdio locks the stream, so concurrent lines do not interleave.
  std::fprintf(stderr, "flashps: %s: %s\n", level_name(level), message.c_str());
}

}  // namespace flashps::log
