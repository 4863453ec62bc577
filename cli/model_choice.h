// Which model a command uses (flashps::choose_model, models/default_model.h) with the CLI's
// bundled-model locations: the source tree (a build) and the installed data folder (a package).
// Notes (the random-weight fallback) go to stderr.
#pragma once
#include <string>

#include "models/default_model.h"

namespace flashps::cli {

using flashps::ModelChoice;

ModelChoice choose_model(const std::string& model_option);

}  // namespace flashps::cli
