// A Flux pipeline as an engine device, with its latency profile: one measured by
// `flashps profile` (a file), else one estimated from the pipeline's device speed model.
#pragma once
#include <memory>
#include <string>

#include "pipeline/flux_inpaint_pipeline.h"
#include "serve/engine.h"

namespace flashps::serve {

DeviceProfile estimated_device_profile(FluxInpaintPipeline& pipeline);
EngineDevice flux_engine_device(std::shared_ptr<FluxInpaintPipeline> pipeline, const std::string& profile_path = {},
                                const std::string& name = "cpu");

}  // namespace flashps::serve
