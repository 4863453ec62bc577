#include "model_choice.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "cache/activation_store.h"
#include "dev/random_model.h"

namespace flashps::cli {

ModelChoice choose_model(const std::string& model_option) {
  namespace fs = std::filesystem;
  if (!model_option.empty()) return {model_option, false};
  if (const char* env = std::getenv("FLASHPS_MODEL")) return {env, false};
  // The bundled model: in the source tree (a build) or the installed data folder (a package).
  for (const fs::path& bundled : {fs::path(FLASHPS_SOURCE_DIR) / "samples" / "models" / "flashps-fill-small",
                                  fs::path(FLASHPS_DATA_DIR) / "models" / "flashps-fill-small"})
    if (fs::exists(bundled / "transformer" / "config.json")) return {bundled.string(), false};
  const fs::path random_model = fs::path(cache::default_store_directory()).parent_path() / "random-fill-model";
  if (!fs::exists(random_model / "model_index.json")) {
    std::cerr << "flashps: the bundled model is missing; writing a random-weight model to " << random_model << "\n";
    dev::write_random_flux_model(random_model.string(), dev::small_fill_model_spec());
  }
  std::cerr << "flashps: note: using a RANDOM-WEIGHT model (" << random_model.string()
            << "): the masked region will be noise, not a real fill\n";
  return {random_model.string(), true};
}

}  // namespace flashps::cli
