// Which model a command uses: --model DIR, else $FLASHPS_MODEL, else the bundled default model,
// else (until a trained default model ships) a random-weight model created once in the cache.
#pragma once
#include <string>

namespace flashps::cli {

struct ModelChoice {
  std::string dir;
  bool random_weights = false;
};

ModelChoice choose_model(const std::string& model_option);

}  // namespace flashps::cli
