// Which devices get a serving worker, and one worker (with its own model) per listed device.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>

#include "core/diagnostics/error.h"
#include "engine/capture.h"
#include "pipeline/flux/flux_inpaint_pipeline.h"
#include "serve/device_selection.h"
#include "serve/engine.h"
#include "serve/engine_device.h"
#include "support/tiny_pipeline.h"

using namespace flashps;
using namespace flashps::serve;
using namespace flashps::test;

TEST_CASE("device lists expand to one device per worker and refuse what is not there", "[serve]") {
  using Devices = std::vector<at::Device>;
  const at::Device cpu(at::kCPU), gpu0(at::kCUDA, 0), gpu1(at::kCUDA, 1);
  CHECK(parse_device_list("cpu", 0) == Devices{cpu});
  CHECK(parse_device_list("auto", 0) == Devices{cpu});
  CHECK(parse_device_list("auto", 2) == Devices{gpu0, gpu1});
  CHECK(parse_device_list("cuda", 2) == Devices{gpu0, gpu1});
  CHECK(parse_device_list(" cuda:1 , cpu", 2) == Devices{gpu1, cpu});

  CHECK_THROWS_WITH(parse_device_list("cuda", 0), Catch::Contains("no CUDA device is visible"));
  CHECK_THROWS_WITH(parse_device_list("cuda:2", 2), Catch::Contains("cuda:2 is not present, 2 CUDA devices"));
  CHECK_THROWS_WITH(parse_device_list("cuda:0,cuda", 2), Catch::Contains("listed twice"));
  CHECK(parse_device_list("cpu,cpu", 0) == Devices{cpu, cpu});  // two CPU workers sharing the cores
  CHECK_THROWS_WITH(parse_device_list("gpu", 1), Catch::Contains("unknown device \"gpu\""));
  CHECK_THROWS_WITH(parse_device_list("cuda:x", 1), Catch::Contains("unknown device"));
  CHECK_THROWS_WITH(parse_device_list("", 1), Catch::Contains("no device listed"));
  // This process: the CPU build sees no GPU, so "auto" is the CPU.
  if (visible_cuda_devices() == 0) CHECK(select_devices("auto") == Devices{cpu});
}

TEST_CASE("each listed device gets a worker with its own model on that device", "[serve][engine]") {
  TempDir dir;
  const std::string model = tiny_model(dir);
  auto store = std::make_shared<engine::MemoryCaptureStore>();
  std::vector<EngineDevice> workers;
  for (const at::Device& device : select_devices("cpu"))
    workers.push_back(engine_device(
        std::shared_ptr<FluxInpaintPipeline>(FluxInpaintPipeline::load(model, at::kFloat, store, device)), {},
        device.str()));
  REQUIRE(workers.size() == 1);
  CHECK(workers[0].name == "cpu");
  auto* pipeline = dynamic_cast<FluxInpaintPipeline*>(workers[0].pipeline.get());
  REQUIRE(pipeline != nullptr);
  CHECK(pipeline->device() == at::Device(at::kCPU));

  // The worker serves the same image as the pipeline loaded directly.
  const EditRequest request = request_for(gradient_image(32, 32), box_mask(32, 32, 8, 8, 12), 3);
  const Image direct = FluxInpaintPipeline::load(model, at::kFloat)->edit(request).image;
  Engine engine(std::move(workers), EngineOptions{});
  CHECK(max_pixel_difference(engine.submit(request).wait().image, direct) == 0);
}

TEST_CASE("a device's estimated profile comes from its pipeline's cost profile", "[serve][engine]") {
  TempDir dir;
  auto pipeline = std::shared_ptr<FluxInpaintPipeline>(FluxInpaintPipeline::load(tiny_model(dir), at::kFloat));
  const PipelineCostProfile cost = pipeline->cost_profile();
  const FluxConfig& config = pipeline->components().transformer->config();
  CHECK(cost.family == "Flux transformer");
  CHECK(static_cast<int64_t>(cost.blocks.size()) == config.block_count());
  CHECK(cost.cache_mode == engine::CacheMode::kv);
  const int64_t side = pipeline->components().native_size > 0 ? pipeline->components().native_size : 512;
  const int64_t token_pixels = pipeline->vae_scale_factor() * 2;
  CHECK(cost.image_tokens == (side / token_pixels) * (side / token_pixels));

  const DeviceProfile profile = engine_device(pipeline).profile;
  CHECK(profile.name == "estimated from the default device speed (Flux transformer; run `flashps profile` to measure)");
  CHECK(profile.blocks.size() == cost.blocks.size());
  CHECK(profile.blocks[0].flops_per_query_row == cost.blocks[0].flops_per_query_row);
  CHECK(profile.block_compute.slope == Approx(1.0 / cost.speed.flops_per_second));
  CHECK(profile.block_load.slope == Approx(1.0 / cost.speed.load_bytes_per_second));
  CHECK(profile.image_tokens == cost.image_tokens);
  CHECK(profile.text_tokens == cost.text_tokens);
  CHECK(profile.steps == cost.steps);
}
