// [cuda]: the GPU paths against the CPU ones. Each test skips (with a message) where no CUDA
// device is visible, which is every CI machine; scripts/gpu-check.sh runs them on a GPU host.
// TF32 is switched off, as ../shared/fixtures/README.md asks for comparisons with references.
#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <torch/cuda.h>

#include <catch2/catch.hpp>

#include "engine/capture_router.h"
#include "engine/capture.h"
#include "engine/token_mask.h"
#include "engine/replay_router.h"
#include "flashps/flashps.h"
#include "models/flux/flux_transformer.h"
#include "models/random/random_weights.h"
#include "pipeline/flux/flux_inpaint_pipeline.h"
#include "pipeline/stable_diffusion/sd_inpaint_pipeline.h"
#include "support/fixtures.h"
#include "support/tiny_flux.h"
#include "support/tiny_pipeline.h"
#include "support/tiny_sd_folder.h"

using namespace flashps;

namespace {

bool have_cuda_device() {
  if (at::hasCUDA()) {
    // Fixed-point comparisons need IEEE fp32 products, not TF32's 10-bit mantissa.
    at::globalContext().setAllowTF32CuBLAS(false);
    at::globalContext().setAllowTF32CuDNN(false);
    return true;
  }
  WARN("SKIPPED: no CUDA device visible (scripts/gpu-check.sh runs these on a GPU host)");
  return false;
}

const at::Device kGpu("cuda:0");

}  // namespace

TEST_CASE("cuda: a Flux edit on cuda:0 equals the CPU's, full and replayed (kv, hidden)", "[cuda]") {
  if (!have_cuda_device()) return;
  test::TempDir dir;
  const std::string model = test::tiny_model(dir);
  auto cpu = FluxInpaintPipeline::load(model, at::kFloat);
  auto gpu = FluxInpaintPipeline::load(model, at::kFloat, nullptr, kGpu);
  REQUIRE(gpu->device() == kGpu);
  EditRequest request = test::request_for(test::gradient_image(64, 48), test::box_mask(64, 48, 16, 16, 20), 5);
  request.mode = CacheMode::full;
  const EditResult on_cpu = cpu->edit(request);
  const EditResult on_gpu = gpu->edit(request);
  // 8-bit images: the same pixels up to one level (float sums in another order).
  CHECK(test::max_pixel_difference(on_gpu.image, on_cpu.image) <= 1);

  // Self-replay on the GPU: the capture (host memory) loaded back to cuda:0 by the side-stream
  // loader reproduces the full run.
  gpu->register_template(request);
  for (CacheMode mode : {CacheMode::kv, CacheMode::hidden}) {
    INFO("mode " << cache_mode_name(mode));
    request.mode = mode;
    const EditResult replayed = gpu->edit(request);
    CHECK(replayed.stats.cache_hit);
    CHECK(replayed.stats.blocks_from_cache > 0);
    CHECK(test::max_pixel_difference(replayed.image, on_cpu.image) <= 1);
  }
}

TEST_CASE("cuda: replay exactness on cuda:0 at the tensor level, and the loader never races", "[cuda]") {
  if (!have_cuda_device()) return;
  FluxTransformer model(test::tiny_flux_config(16, 16, 2, 2));
  fill_random_weights(*model, 7);
  model->to(kGpu);
  constexpr int64_t kGrid = 8, kText = 8;
  constexpr int kSteps = 3;
  auto generator = at::detail::createCPUGenerator(3);
  const at::Tensor latents = at::randn({kGrid * kGrid, 16}, generator).to(kGpu);
  const at::Tensor text = at::randn({kText, 32}, generator).to(kGpu), pooled = at::randn({32}, generator).to(kGpu);
  const at::Tensor rows = at::arange(kGrid).repeat_interleave(kGrid), cols = at::arange(kGrid).repeat({kGrid});
  const at::Tensor img_ids = at::stack({at::zeros_like(rows), rows, cols}, 1).to(at::kFloat).to(kGpu);
  const at::Tensor txt_ids = at::zeros({kText, 3}).to(kGpu);
  const auto run = [&](const std::function<void(FluxRequest&, int)>& route) {
    at::Tensor x = latents.clone();
    for (int step = 0; step < kSteps; ++step) {
      FluxRequest request;
      request.hidden_states = x;
      request.encoder_hidden_states = text;
      request.pooled_projections = pooled;
      request.img_ids = img_ids;
      request.txt_ids = txt_ids;
      request.timestep = 1.0 - 0.3 * step;
      if (route) route(request, step);
      x = x - 0.3 * model->forward({request})[0];
    }
    return x.to(at::kCPU);
  };
  engine::MemoryCaptureStore store;
  auto writer = store.begin({"template", "model", "cuda"});
  engine::CaptureRouter capture(*writer, /*kv=*/true, /*hidden=*/true);
  const at::Tensor full = run([&](FluxRequest& request, int step) {
    capture.set_step(step);
    request.router = &capture;
  });
  const auto captured = writer->commit();
  at::Tensor grid = at::zeros({kGrid, kGrid}, at::kBool);
  grid.narrow(0, 2, 3).narrow(1, 3, 3).fill_(true);
  const engine::TokenMask mask = engine::token_mask_from_grid(grid);
  const std::vector<int> steps = {0, 1, 2};
  for (engine::CacheMode kind : {engine::CacheMode::kv, engine::CacheMode::hidden}) {
    INFO("mode " << engine::cache_mode_name(kind));
    // Repeated: the loader's copies on its side stream must be ordered before every use, every
    // time (a missing event shows up as a run that differs).
    for (int repeat = 0; repeat < 20; ++repeat) {
      engine::ReplayRouter router(captured, mask, kind, std::vector<bool>(model->config().block_count(), true), steps,
                                  kGpu);
      const at::Tensor replayed = run([&](FluxRequest& request, int step) {
        router.set_step(step);
        request.router = &router;
        request.carried_rows = router.carried_rows();
      });
      REQUIRE((replayed - full).abs().max().item<double>() <= 1e-4);
    }
  }
}

TEST_CASE("cuda: a Stable Diffusion edit on cuda:0 equals the CPU's, and replays there", "[cuda][fixtures]") {
  if (!have_cuda_device()) return;
  const auto fixtures = test::fixtures_root();
  if (!fixtures) {
    WARN("SKIPPED: ../shared/fixtures not found (set FLASHPS_FIXTURES_DIR)");
    return;
  }
  test::TempDir dir;
  for (int channels : {9, 4}) {
    INFO(channels << "-channel UNet");
    const std::string folder = test::tiny_sd_folder(*fixtures, dir, channels);
    auto cpu = SDInpaintPipeline::load(folder, at::kFloat);
    auto gpu = SDInpaintPipeline::load(folder, at::kFloat, nullptr, kGpu);
    REQUIRE(gpu->device() == kGpu);
    EditRequest request = test::request_for(test::gradient_image(40, 36), test::box_mask(40, 36, 8, 8, 16), 3, 4);
    request.prompt = "a red apple";
    request.mode = CacheMode::full;
    const EditResult on_cpu = cpu->edit(request);
    CHECK(test::max_pixel_difference(gpu->edit(request).image, on_cpu.image) <= 1);
    gpu->register_template(request);
    request.mode = CacheMode::hidden;
    request.use_planner = false;
    const EditResult replayed = gpu->edit(request);
    CHECK(replayed.stats.cache_hit);
    CHECK(test::max_pixel_difference(replayed.image, on_cpu.image) <= 1);
  }
}

TEST_CASE("cuda: the engine runs one worker per GPU", "[cuda][api]") {
  if (!have_cuda_device()) return;
  test::TempDir dir;
  const std::string model = test::tiny_model(dir);
  flashps_engine_params params = flashps_engine_default_params();
  params.devices = "cuda";
  flashps_engine* engine = nullptr;
  REQUIRE(flashps_engine_open(model.c_str(), &params, &engine) == FLASHPS_OK);
  flashps_engine_counters counters{};
  counters.struct_size = sizeof(counters);
  REQUIRE(flashps_engine_counters_get(engine, &counters) == FLASHPS_OK);
  CHECK(counters.workers == static_cast<int>(torch::cuda::device_count()));
  flashps_model_info info{};
  info.struct_size = sizeof(info);
  REQUIRE(flashps_engine_info(engine, &info) == FLASHPS_OK);
  CHECK_THAT(std::string(info.device), Catch::Contains("cuda:0"));
  flashps_engine_close(engine);
}
