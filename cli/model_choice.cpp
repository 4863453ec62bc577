#include "model_choice.h"

#include <filesystem>
#include <iostream>

namespace flashps::cli {

ModelChoice choose_model(const std::string& model_option) {
  namespace fs = std::filesystem;
  const ModelChoice choice = flashps::choose_model(
      model_option, {(fs::path(FLASHPS_SOURCE_DIR) / "samples" / "models" / kBundledModelName).string(),
                     (fs::path(FLASHPS_DATA_DIR) / "models" / kBundledModelName).string()});
  for (const std::string& note : choice.notes) std::cerr << "flashps: note: " << note << "\n";
  return choice;
}

}  // namespace flashps::cli
