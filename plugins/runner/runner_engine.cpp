#include "runner_engine.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>
#include <stdexcept>

namespace flashps::plugins {
namespace {

template <typename Function>
void resolve(void* library, const char* name, Function* function) {
  *function = reinterpret_cast<Function>(dlsym(library, name));
  if (!*function) throw std::runtime_error(std::string("libflashps lacks ") + name);
}

}  // namespace

const EngineFunctions& load_runner_engine(int threads) {
  static EngineFunctions functions;
  if (functions.complete()) return functions;
  // Absolute paths first: the RUNPATH applies only to dlopen calls the loader sees coming from the
  // runner, and a sanitizer's dlopen interceptor hides that. Installed: libexec/flashps/ is two
  // folders below the prefix; in the build tree the library's folder is compiled in.
  std::vector<std::string> candidates;
  if (const char* override_path = std::getenv("FLASHPS_LIBRARY"); override_path && *override_path)
    candidates.push_back(override_path);
  std::error_code error;
  const std::filesystem::path prefix =
      std::filesystem::read_symlink("/proc/self/exe", error).parent_path().parent_path().parent_path();
  if (!error)
    candidates.push_back((prefix / FLASHPS_RUNNER_INSTALL_LIBDIR / FLASHPS_RUNNER_SDK_LIBRARY).string());
  candidates.push_back(std::string(FLASHPS_RUNNER_BUILD_SDK_DIR) + "/" + FLASHPS_RUNNER_SDK_LIBRARY);
  candidates.push_back(FLASHPS_RUNNER_SDK_LIBRARY);
  void* library = nullptr;
  std::string reasons;
  for (const std::string& candidate : candidates) {
    if ((library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_GLOBAL))) break;
    const char* reason = dlerror();
    reasons += std::string(reasons.empty() ? "" : "; ") + (reason ? reason : candidate.c_str());
  }
  if (!library) throw std::runtime_error("cannot load the FlashPS library: " + reasons);
  EngineFunctions loaded;
  resolve(library, "flashps_edit_default_params", &loaded.edit_default_params);
  resolve(library, "flashps_editor_default_params", &loaded.editor_default_params);
  resolve(library, "flashps_editor_open", &loaded.editor_open);
  resolve(library, "flashps_editor_close", &loaded.editor_close);
  resolve(library, "flashps_editor_info", &loaded.editor_info);
  resolve(library, "flashps_template_lookup", &loaded.template_lookup);
  resolve(library, "flashps_template_register_masked", &loaded.template_register_masked);
  resolve(library, "flashps_edit", &loaded.edit);
  resolve(library, "flashps_image_free", &loaded.image_free);
  resolve(library, "flashps_last_error", &loaded.last_error);
  resolve(library, "flashps_store_default_directory", &loaded.store_default_directory);
  resolve(library, "flashps_init", &loaded.init);
  resolve(library, "flashps_runtime_default_options", &loaded.runtime_default_options);
  flashps_runtime_options options = loaded.runtime_default_options();
  options.threads = threads;
  options.keep_freed_memory = 1;
  if (loaded.init(&options) != FLASHPS_OK)
    throw std::runtime_error(std::string("flashps_init failed: ") + loaded.last_error());
  functions = loaded;
  return functions;
}

}  // namespace flashps::plugins
