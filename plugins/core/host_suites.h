// The host's suite tables (flashps/plugin.h): C functions that forward to the FilterSession the
// plugin's host handle is. Exceptions never cross into plugin code.
#ifndef FLASHPS_PLUGINS_HOST_SUITES_H
#define FLASHPS_PLUGINS_HOST_SUITES_H

#include "flashps/plugin.h"

namespace flashps::plugins {

struct EngineFunctions;

// The tables, with an engine suite over `engine` (the public C API of this process: the same for
// every call), or without one when `engine` is nullptr (a runner that loaded no model).
const flashps_host_suites* host_suites(const EngineFunctions* engine);

}  // namespace flashps::plugins

#endif
