#include "serve/engine_device.h"

namespace flashps::serve {

DeviceProfile estimated_device_profile(const StepwisePipeline& pipeline) {
  const PipelineCostProfile cost = pipeline.cost_profile();
  DeviceProfile profile;
  profile.name = "estimated from the default device speed (" + cost.family + "; run `flashps profile` to measure)";
  profile.blocks = cost.blocks;
  profile.cache_mode = cost.cache_mode;
  profile.block_compute = {1.0 / cost.speed.flops_per_second, cost.speed.fixed_seconds_per_block, 1.0, 0};
  profile.block_load = {1.0 / cost.speed.load_bytes_per_second, cost.speed.fixed_seconds_per_load, 1.0, 0};
  profile.image_tokens = cost.image_tokens;
  profile.text_tokens = cost.text_tokens;
  profile.steps = cost.steps;
  return profile;
}

EngineDevice engine_device(std::shared_ptr<StepwisePipeline> pipeline, const std::string& profile_path,
                           const std::string& name) {
  EngineDevice device;
  device.name = name;
  device.profile = profile_path.empty() ? estimated_device_profile(*pipeline) : read_device_profile(profile_path);
  device.pipeline = std::move(pipeline);
  return device;
}

}  // namespace flashps::serve
