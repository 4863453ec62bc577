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
  device.profile = estimated_device_profile(*pipeline);
  if (const std::string path = resolve_profile_path(profile_path); !path.empty()) {
    // The device's measured speed, this model's blocks: a profile measured with another model
    // (the default location holds one for the device) still describes the device.
    const DeviceProfile measured = read_device_profile(path);
    device.profile.name = measured.name + " (" + path + ")";
    device.profile.block_compute = measured.block_compute;
    device.profile.block_load = measured.block_load;
    device.profile.step_fixed_seconds = measured.step_fixed_seconds;
    device.profile.preprocess_seconds = measured.preprocess_seconds;
    device.profile.postprocess_seconds = measured.postprocess_seconds;
    device.profile.measured_steps = measured.measured_steps;
    pipeline->use_profile_speed(device_speed_of(measured));
  }
  device.pipeline = std::move(pipeline);
  return device;
}

}  // namespace flashps::serve
