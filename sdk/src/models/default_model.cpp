#include "models/default_model.h"

#include <cstdlib>
#include <filesystem>

#include "cache/activation_store.h"
#include "dev/random_model.h"

namespace flashps {

ModelChoice choose_model(const std::string& model_option, const std::vector<std::string>& bundled_model_dirs) {
  namespace fs = std::filesystem;
  if (!model_option.empty()) return {model_option, false, {}};
  if (const char* env = std::getenv("FLASHPS_MODEL")) return {env, false, {}};
  for (const std::string& bundled : bundled_model_dirs)
    if (fs::exists(fs::path(bundled) / "transformer" / "config.json")) return {bundled, false, {}};
  ModelChoice choice;
  const fs::path random_model = fs::path(cache::default_store_directory()).parent_path() / "random-fill-model";
  if (!fs::exists(random_model / "model_index.json")) {
    choice.notes.push_back("the bundled model is missing; writing a random-weight model to " + random_model.string());
    dev::write_random_flux_model(random_model.string(), dev::small_fill_model_spec());
  }
  choice.notes.push_back("using a RANDOM-WEIGHT model (" + random_model.string() +
                         "): the masked region will be noise, not a real fill");
  choice.dir = random_model.string();
  choice.random_weights = true;
  return choice;
}

}  // namespace flashps
