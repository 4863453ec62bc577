// A Stable Diffusion pipeline as an engine device, with a latency profile estimated from the
// pipeline's device speed model and the UNet's cost on the latent grid (models/unet/
// unet_block_work.h): transformer blocks the mask-aware engine shrinks, plus the dense rest.
#pragma once
#include <memory>
#include <string>

#include "pipeline/sd_inpaint_pipeline.h"
#include "serve/engine.h"

namespace flashps::serve {

DeviceProfile estimated_sd_device_profile(SDInpaintPipeline& pipeline);
EngineDevice sd_engine_device(std::shared_ptr<SDInpaintPipeline> pipeline, const std::string& profile_path = {},
                              const std::string& name = "cpu");

}  // namespace flashps::serve
