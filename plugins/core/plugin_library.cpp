#include "plugin_library.h"

#include <dlfcn.h>

#include <stdexcept>

namespace flashps::plugins {

const flashps_plugin_descriptor* open_plugin_library(const std::string& path) {
  // RTLD_LOCAL: two plugins may define the same symbols without clashing.
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* reason = dlerror();
    throw std::runtime_error(std::string("cannot load it: ") + (reason ? reason : "unknown dlopen error"));
  }
  dlerror();
  void* entry = dlsym(library, FLASHPS_PLUGIN_ENTRY_SYMBOL);
  if (!entry)
    throw std::runtime_error("it exports no " FLASHPS_PLUGIN_ENTRY_SYMBOL
                             " (is it a FlashPS plugin? the entry needs FLASHPS_PLUGIN_EXPORT and extern \"C\")");
  const auto entry_function = reinterpret_cast<flashps_plugin_entry_fn>(entry);
  const flashps_plugin_descriptor* descriptor = entry_function(FLASHPS_PLUGIN_ABI_VERSION);
  if (!descriptor)
    throw std::runtime_error("its " FLASHPS_PLUGIN_ENTRY_SYMBOL " returned no descriptor for plugin ABI " +
                             std::to_string(FLASHPS_PLUGIN_ABI_VERSION) + " (it does not support this FlashPS)");
  return descriptor;
}

}  // namespace flashps::plugins
