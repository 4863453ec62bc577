// Forwarding header: the default-model choice moved to app/default_model.h (app services: front-end
// policy, which the model layer must not know). Kept for the CLI and the desktop app until they
// use the public C API (flashps_default_model_dir); new code includes app/default_model.h.
#pragma once
#include "app/default_model.h"

namespace flashps {

using app::choose_model;
using app::kBundledModelName;
using app::ModelChoice;

}  // namespace flashps
