// A pipeline as an engine device, with its latency profile: one measured by `flashps profile`
// (a file), else one estimated from the pipeline's own cost profile (pipeline/edit_job.h) and
// device speed model. Serving asks the pipeline; it never reads a model's config.
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
