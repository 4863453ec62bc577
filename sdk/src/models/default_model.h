// Which model a front end uses: an explicit folder, else $FLASHPS_MODEL, else the bundled default
// model (samples/models/flashps-fill-small) in the first of the given folders that holds it,
// else — only if it was removed — a random-weight model created once in the cache, with a note.
// Front ends pass where the bundled model can be (source tree, installed data folder, next to
// the executable) because only they know those paths.
#pragma once
#include <string>
#include <vector>

namespace flashps {

inline constexpr const char* kBundledModelName = "flashps-fill-small";

struct ModelChoice {
  std::string dir;
  bool random_weights = false;
  std::vector<std::string> notes;  // user-facing remarks (random-weight fallback)
};

// bundled_model_dirs: candidate folders of the bundled model itself (…/flashps-fill-small).
ModelChoice choose_model(const std::string& model_option, const std::vector<std::string>& bundled_model_dirs);

}  // namespace flashps
