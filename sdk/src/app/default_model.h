// Which model a front end edits with when it names none: $FLASHPS_MODEL, else the bundled model
// (flashps-fill-small) in the first candidate folder that holds it, else (only if it was
// removed) a random-weight stand-in written once to the cache, with warnings. The library
// knows the candidates itself (bundled_model_dirs), so every front end gets the same model.
#pragma once
#include <string>
#include <vector>

namespace flashps::app {

inline constexpr const char* kBundledModelName = "flashps-fill-small";

struct ModelChoice {
  std::string dir;
  bool random_weights = false;
  std::vector<std::string> notes;  // user-facing remarks (random-weight fallback)
};

// Where the bundled model can be, in order: the data folder installed beside the loaded library
// (<libdir>/../share/flashps/models/flashps-fill-small, found from the library's own path), the
// install data folder configured at build time, and the source tree of this build.
std::vector<std::string> bundled_model_dirs();

// model_option when set; else $FLASHPS_MODEL; else the first of bundled_model_dirs (candidate
// folders of the bundled model itself) that holds it; else the random-weight stand-in.
ModelChoice choose_model(const std::string& model_option, const std::vector<std::string>& bundled_model_dirs);

// choose_model("", candidates) with its notes logged as warnings (core/diagnostics/log.h).
ModelChoice choose_default_model(const std::vector<std::string>& candidates);

// choose_default_model(bundled_model_dirs()), decided once per process (a failure is retried on
// the next call): what flashps_default_model_dir() returns.
const ModelChoice& default_model();

}  // namespace flashps::app
