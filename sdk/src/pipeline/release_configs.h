// The diffusers configs of real releases, for single files that carry none (as diffusers'
// single-file loader takes them from each release's repository). One table per family:
// pipeline/flux/flux_release_configs.cpp, pipeline/stable_diffusion/sd_release_configs.cpp.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "pipeline/model_type.h"

namespace flashps {

// The file `relative` of the release's diffusers folder ("model_index.json",
// "transformer/config.json", "scheduler/scheduler_config.json", ...); null when the release has
// no such file. Each family's table answers for its own types.
nlohmann::json flux_release_file(const ModelType& type, const std::string& relative);
nlohmann::json sd_release_file(const ModelType& type, const std::string& relative);
nlohmann::json release_file(const ModelType& type, const std::string& relative);

}  // namespace flashps
