// The library's process-wide log: one line at a time with a level, to a replaceable sink.
// Without a sink, warnings and errors go to stderr ("flashps: warning: ...") and the rest is
// dropped; flashps_init() (api/runtime_api.cpp) installs the caller's callback and level.
#pragma once
#include <functional>
#include <string>

namespace flashps::log {

enum class Level { debug = 0, info = 1, warning = 2, error = 3 };
const char* level_name(Level level);  // "debug", "info", "warning", "error"

// Receives one line (no trailing newline). Called on whichever thread logged; must be thread-safe.
using Sink = std::function<void(Level level, const std::string& message)>;

// Replaces the sink (empty: the default stderr sink) and the lowest level passed to it.
void configure(Sink sink, Level min_level);
// The default sink at level warning, as before any configure().
void reset();

void write(Level level, const std::string& message);
inline void debug(const std::string& message) { write(Level::debug, message); }
inline void info(const std::string& message) { write(Level::info, message); }
inline void warning(const std::string& message) { write(Level::warning, message); }
inline void error(const std::string& message) { write(Level::error, message); }

}  // namespace flashps::log
