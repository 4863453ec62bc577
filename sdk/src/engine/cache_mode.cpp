#include "engine/cache_mode.h"

#include "core/diagnostics/error.h"

namespace flashps::engine {

const char* cache_mode_name(CacheMode mode) {
  switch (mode) {
    case CacheMode::automatic: return "auto";
    case CacheMode::full: return "full";
    case CacheMode::kv: return "kv";
    case CacheMode::hidden: return "hidden";
  }
  return "?";
}

CacheMode cache_mode_from_name(const std::string& name) {
  if (name == "auto") return CacheMode::automatic;
  if (name == "full") return CacheMode::full;
  if (name == "kv") return CacheMode::kv;
  if (name == "hidden") return CacheMode::hidden;
  throw Error("unknown cache mode '" + name + "' (expected auto, full, kv or hidden)");
}

CacheMode replay_mode(CacheMode mode, const char* what) {
  if (mode == CacheMode::kv || mode == CacheMode::hidden) return mode;
  throw Error(std::string(what) + ": a replay runs as cache mode kv or hidden, not '" + cache_mode_name(mode) + "'");
}

}  // namespace flashps::engine
