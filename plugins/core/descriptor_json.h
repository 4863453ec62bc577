// A plugin's descriptor as JSON, and the one check every descriptor passes before the host uses
// it, whether it was read in this process (dlopen) or sent by a runner (untrusted bytes).
#ifndef FLASHPS_PLUGINS_DESCRIPTOR_JSON_H
#define FLASHPS_PLUGINS_DESCRIPTOR_JSON_H

#include <nlohmann/json.hpp>
#include <string>

#include "flashps/plugin.h"
#include "flashps/plugin_host.hpp"

namespace flashps::plugins {

// Reads the C descriptor field by field, guarding against what a plugin can get wrong (NULL
// strings, a too-small struct_size, parameter arrays of another stride). Throws
// std::runtime_error with the reason.
nlohmann::json descriptor_to_json(const flashps_plugin_descriptor* descriptor);

// The checked descriptor (name, parameter schema, ABI version, flags); throws
// std::runtime_error with a message a plugin author can act on. `path` is not read: it is copied
// into the result.
PluginInfo validate_descriptor(const nlohmann::json& descriptor, const std::string& path);

}  // namespace flashps::plugins

#endif
