// The bundled default model (samples/models/flashps-fill-small) loads and fills plausibly: on
// random masks over crops of the sample photos (which it was not trained on), its masked-region
// PSNR and SSIM beat filling with the mean colour, the output is finite, and unmasked pixels
// are untouched. The files' checksums are checked by the ctest "model.bundled_checksums".
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "bench/quality_benchmark.h"
#include "core/image/image.h"
#include "core/mask/mask_ops.h"
#include "pipeline/flux/flux_inpaint_pipeline.h"
#include "pipeline/image_tensors.h"
#include "workload/mask_ratio_trace.h"
#include "support/source_dir.h"

using namespace flashps;

namespace {
const std::string kSource = flashps::test::source_dir();
const std::string kModel = kSource + "/samples/models/flashps-fill-small";
}  // namespace

TEST_CASE("the bundled model beats mean-colour fill on held-out crops", "[models][bundled][slow]") {
  REQUIRE(std::filesystem::exists(kModel + "/transformer/config.json"));
  bench::QualityBenchmarkOptions options;
  options.model_dir = kModel;
  options.photo_folders = {kSource + "/samples/images"};
  options.holdout_every = 0;
  options.trace_files = workload::default_trace_files(kSource);  // uniform fallback without ../shared
  options.crops = 8;
  options.crop_size = 128;
  options.steps = 1;  // the model's conditional-mean estimate
  options.fidelity_crops = 0;
  bench::QualityReport report = bench::run_quality_benchmark(options);
  auto row = [&](const std::string& method) {
    for (const bench::QualityRow& r : report.rows)
      if (r.method == method) return r;
    FAIL("no row " << method);
    return bench::QualityRow{};
  };
  const bench::QualityRow model = row("model"), mean_fill = row("mean_fill");
  INFO(report.table());
  CHECK(model.psnr > mean_fill.psnr + 1.0);
  CHECK(model.ssim > mean_fill.ssim);
}

TEST_CASE("the bundled model edits a full-size sample: finite, unmasked pixels kept", "[models][bundled]") {
  auto pipeline = FluxInpaintPipeline::load(kModel, at::kFloat);
  REQUIRE(pipeline->is_fill());
  REQUIRE(pipeline->is_unconditional());
  const Image image = to_rgb(read_image(kSource + "/samples/images/fig.jpg"));
  const Image mask = binarize_mask(read_image(kSource + "/samples/masks/fig.png"));
  EditRequest request;
  request.image = image;
  request.mask = mask;
  request.seed = 1;
  request.steps = 0;  // the model's recommendation (model_index.json), as `flashps edit` without --steps
  EditResult result = pipeline->edit(request);
  CHECK(result.stats.steps_run == pipeline->recommended_steps());
  REQUIRE(result.image.width == image.width);
  REQUIRE(result.image.height == image.height);
  at::Tensor output = image_to_tensor(result.image), original = image_to_tensor(image);
  CHECK(at::isfinite(output).all().item<bool>());
  const at::Tensor keep = mask_to_tensor(mask) < 0.5;
  CHECK(((output - original).abs().amax(0) * keep).max().item<float>() == 0.0f);
  const at::Tensor inside = mask_to_tensor(mask) > 0.5;
  CHECK(((output - original).abs().amax(0) * inside).max().item<float>() > 0.0f);
}
