// Which model a command uses: --model DIR, else $FLASHPS_MODEL, else the bundled default model
// (samples/models/flashps-fill-small, in the source tree or installed), else — only if that
// folder was removed — a random-weight model created once in the cache, with a warning.
#pragma once
#include <string>

namespace flashps::cli {

struct ModelChoice {
  std::string dir;
  bool random_weights = false;
};

ModelChoice choose_model(const std::string& model_option);

}  // namespace flashps::cli
