// How an edit uses the template cache: the one name for it in code (CacheMode), the C API
// (flashps_cache_mode), the CLI (--cache) and files (device profiles), spelled alike everywhere.
//   automatic  replay a registered template when there is one (kv if captured, else hidden),
//              otherwise compute in full;
//   full       compute every token;
//   kv         replay the cached keys/values of unmasked tokens (the stream carries masked ones);
//   hidden     replay the cached block outputs of unmasked tokens (the stream stays full).
// A replay runs as kv or hidden; the planner, cost model and routers take only those two.
#pragma once
#include <string>

namespace flashps::engine {

enum class CacheMode { automatic, full, kv, hidden };

const char* cache_mode_name(CacheMode mode);            // "auto" | "full" | "kv" | "hidden"
CacheMode cache_mode_from_name(const std::string& name);  // Error naming the choices otherwise
// kv or hidden: the modes a replay runs as. Error (naming `what`) for automatic and full.
CacheMode replay_mode(CacheMode mode, const char* what);

}  // namespace flashps::engine
