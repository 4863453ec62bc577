#include "runner_engine.h"

#include <dlfcn.h>

#include <cstdlib>
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
  const char* override_path = std::getenv("FLASHPS_LIBRARY");
  // FLASHPS_RUNNER_SDK_LIBRARY is the soname; the runner's RUNPATH leads to it (build tree and install).
  const char* path = override_path && *override_path ? override_path : FLASHPS_RUNNER_SDK_LIBRARY;
  void* library = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (!library) {
    const char* reason = dlerror();
    throw std::runtime_error(std::string("cannot load the FlashPS library: ") + (reason ? reason : path));
  }
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
