// A Flux pipeline as an engine device, with its latency profile: one measured by
// `flashps profile` (a file), else one estimated from the pipeline's device speed model.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "pipeline/flux_inpaint_pipeline.h"
#include "serve/engine.h"

namespace flashps::serve {

DeviceProfile estimated_device_profile(FluxInpaintPipeline& pipeline);
EngineDevice flux_engine_device(std::shared_ptr<FluxInpaintPipeline> pipeline, const std::string& profile_path = {},
                                const std::string& name = "cpu");
// One worker per device (serve/device_selection.h), each with its own copy of the model; all
// share `store`, so a template registered through any of them serves the others.
std::vector<EngineDevice> flux_engine_devices(const std::string& model_dir, at::ScalarType dtype,
                                              std::shared_ptr<engine::CaptureStore> store,
                                              const std::vector<at::Device>& devices,
                                              const std::string& profile_path = {});

}  // namespace flashps::serve
