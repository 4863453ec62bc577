#include "app/default_model.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>

#include "cache/activation_store.h"
#include "core/diagnostics/log.h"
#include "models/random/random_model.h"

namespace flashps::app {
namespace fs = std::filesystem;
namespace {

bool holds_bundled_model(const fs::path& dir) { return fs::exists(dir / "transformer" / "config.json"); }

// The file this code was loaded from: libflashps.so, or the executable it is linked into.
fs::path loaded_binary() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&bundled_model_dirs), &info) == 0 || !info.dli_fname) return {};
  std::error_code error;
  const fs::path path = fs::canonical(info.dli_fname, error);
  return error ? fs::path() : path;
}

}  // namespace

std::vector<std::string> bundled_model_dirs() {
  std::vector<std::string> dirs;
  const fs::path binary = loaded_binary();
  if (!binary.empty())  // <prefix>/lib/libflashps.so or <prefix>/bin/flashps -> <prefix>/share/flashps
    dirs.push_back((binary.parent_path().parent_path() / "share" / "flashps" / "models" / kBundledModelName).string());
#ifdef FLASHPS_DATA_DIR
  dirs.push_back((fs::path(FLASHPS_DATA_DIR) / "models" / kBundledModelName).string());
#endif
#ifdef FLASHPS_SOURCE_DIR
  dirs.push_back((fs::path(FLASHPS_SOURCE_DIR) / "samples" / "models" / kBundledModelName).string());
#endif
  return dirs;
}

ModelChoice choose_model(const std::string& model_option, const std::vector<std::string>& bundled_model_dirs) {
  if (!model_option.empty()) return {model_option, false, {}};
  if (const char* env = std::getenv("FLASHPS_MODEL"); env && *env) return {env, false, {}};
  for (const std::string& bundled : bundled_model_dirs)
    if (holds_bundled_model(bundled)) return {bundled, false, {}};
  ModelChoice choice;
  const fs::path random_model = fs::path(cache::default_store_directory()).parent_path() / "random-fill-model";
  if (!fs::exists(random_model / "model_index.json")) {
    choice.notes.push_back("the bundled model is missing; writing a random-weight model to " + random_model.string());
    write_random_flux_model(random_model.string(), small_fill_model_spec());
  }
  choice.notes.push_back("using a RANDOM-WEIGHT model (" + random_model.string() +
                         "): the masked region will be noise, not a real fill");
  choice.dir = random_model.string();
  choice.random_weights = true;
  return choice;
}

ModelChoice choose_default_model(const std::vector<std::string>& candidates) {
  ModelChoice choice = choose_model("", candidates);
  for (const std::string& note : choice.notes) log::warning(note);
  return choice;
}

const ModelChoice& default_model() {
  static std::mutex mutex;
  static std::unique_ptr<const ModelChoice> chosen;
  std::lock_guard<std::mutex> lock(mutex);
  if (!chosen) chosen = std::make_unique<const ModelChoice>(choose_default_model(bundled_model_dirs()));
  return *chosen;
}

}  // namespace flashps::app
