#include "serve/flux_device.h"

namespace flashps::serve {

DeviceProfile estimated_device_profile(FluxInpaintPipeline& pipeline) {
  const FluxPipelineComponents& components = pipeline.components();
  const engine::DeviceSpeed& speed = pipeline.device_speed();
  DeviceProfile profile;
  profile.name = "estimated from the default device speed (run `flashps profile` to measure)";
  profile.blocks = flux_block_work(components.transformer->config(), c10::elementSize(components.transformer->dtype()));
  profile.cache_kind = engine::CacheKind::kv;
  profile.block_compute = {1.0 / speed.flops_per_second, speed.fixed_seconds_per_block, 1.0, 0};
  profile.block_load = {1.0 / speed.load_bytes_per_second, speed.fixed_seconds_per_load, 1.0, 0};
  const int64_t token_pixels = pipeline.vae_scale_factor() * 2;
  const int64_t side = components.native_size > 0 ? components.native_size : 512;
  profile.image_tokens = (side / token_pixels) * (side / token_pixels);
  profile.text_tokens = components.empty_prompt.defined() ? components.empty_prompt.prompt_embeds.size(0) : 512;
  profile.steps = 28;
  return profile;
}

EngineDevice flux_engine_device(std::shared_ptr<FluxInpaintPipeline> pipeline, const std::string& profile_path,
                                const std::string& name) {
  EngineDevice device;
  device.name = name;
  device.profile = profile_path.empty() ? estimated_device_profile(*pipeline) : read_device_profile(profile_path);
  device.pipeline = std::move(pipeline);
  return device;
}

std::vector<EngineDevice> flux_engine_devices(const std::string& model_dir, at::ScalarType dtype,
                                              std::shared_ptr<engine::CaptureStore> store,
                                              const std::vector<at::Device>& devices,
                                              const std::string& profile_path) {
  std::vector<EngineDevice> workers;
  for (const at::Device& device : devices)
    workers.push_back(flux_engine_device(
        std::shared_ptr<FluxInpaintPipeline>(FluxInpaintPipeline::load(model_dir, dtype, store, device)), profile_path,
        device.str()));
  return workers;
}

}  // namespace flashps::serve
