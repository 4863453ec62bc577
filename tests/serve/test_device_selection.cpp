// Which devices get a serving worker, and one worker (with its own model) per listed device.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>

#include "core/error.h"
#include "engine/capture.h"
#include "pipeline/flux_inpaint_pipeline.h"
#include "serve/device_selection.h"
#include "serve/engine.h"
#include "serve/flux_device.h"
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
  std::vector<EngineDevice> workers = flux_engine_devices(model, at::kFloat, store, {at::Device(at::kCPU)});
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
