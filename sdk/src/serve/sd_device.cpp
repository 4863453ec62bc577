#include "serve/sd_device.h"

#include "models/unet/unet_block_work.h"

namespace flashps::serve {

DeviceProfile estimated_sd_device_profile(SDInpaintPipeline& pipeline) {
  const UNet2DConditionModel& unet = pipeline.components().unet;
  const engine::DeviceSpeed& speed = pipeline.device_speed();
  DeviceProfile profile;
  profile.name = "estimated from the default device speed (Stable Diffusion UNet)";
  profile.blocks = unet_latent_grid_work(unet->config(), 77, c10::elementSize(unet->dtype()));
  profile.cache_kind = engine::CacheKind::hidden;
  profile.block_compute = {1.0 / speed.flops_per_second, speed.fixed_seconds_per_block, 1.0, 0};
  profile.block_load = {1.0 / speed.load_bytes_per_second, speed.fixed_seconds_per_load, 1.0, 0};
  const int64_t latent_side = 512 / pipeline.components().vae->scale_factor();
  profile.image_tokens = 2 * latent_side * latent_side;  // both guidance rows
  profile.text_tokens = 0;  // the prompt is cross-attention context, not token rows
  profile.steps = 50;
  return profile;
}

EngineDevice sd_engine_device(std::shared_ptr<SDInpaintPipeline> pipeline, const std::string& profile_path,
                              const std::string& name) {
  EngineDevice device;
  device.name = name;
  device.profile = profile_path.empty() ? estimated_sd_device_profile(*pipeline) : read_device_profile(profile_path);
  device.pipeline = std::move(pipeline);
  return device;
}

}  // namespace flashps::serve
