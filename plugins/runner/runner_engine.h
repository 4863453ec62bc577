// The runner's engine suite: libflashps loaded with dlopen only when a plugin needs a model, so
// describing plugins and running model-free ones never pay for loading LibTorch.
#ifndef FLASHPS_PLUGINS_RUNNER_ENGINE_H
#define FLASHPS_PLUGINS_RUNNER_ENGINE_H

#include <string>

#include "engine_functions.h"

namespace flashps::plugins {

// Loads libflashps ($FLASHPS_LIBRARY, else the one installed beside the runner) and initialises
// it with `threads`; throws std::runtime_error naming what is missing.
const EngineFunctions& load_runner_engine(int threads);

}  // namespace flashps::plugins

#endif
