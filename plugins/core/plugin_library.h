// A plugin's shared library opened in this process, and its descriptor. Libraries stay loaded
// for the life of the process: a plugin may have started threads or registered handlers that
// would outlive an unload.
#ifndef FLASHPS_PLUGINS_PLUGIN_LIBRARY_H
#define FLASHPS_PLUGINS_PLUGIN_LIBRARY_H

#include <string>

#include "flashps/plugin.h"

namespace flashps::plugins {

// dlopen + flashps_plugin_entry(host ABI); throws std::runtime_error("cannot load: ...",
// "exports no flashps_plugin_entry ...") naming nothing: callers prefix the path.
const flashps_plugin_descriptor* open_plugin_library(const std::string& path);

}  // namespace flashps::plugins

#endif
