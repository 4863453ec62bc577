// A pipeline as an engine device, with its latency profile: the pipeline's own cost profile
// (pipeline/edit_job.h: its blocks) with the speeds measured by `flashps profile` when a profile
// file is found (serve/device_profile.h: resolve_profile_path), which the pipeline's planner
// then plans with too; else the pipeline's online speed estimate. Serving asks the pipeline; it
// never reads a model's config.
#pragma once
#include <memory>
#include <string>

#include "pipeline/edit_job.h"
#include "serve/engine.h"

namespace flashps::serve {

DeviceProfile estimated_device_profile(const StepwisePipeline& pipeline);
EngineDevice engine_device(std::shared_ptr<StepwisePipeline> pipeline, const std::string& profile_path = {},
                           const std::string& name = "cpu");

}  // namespace flashps::serve
