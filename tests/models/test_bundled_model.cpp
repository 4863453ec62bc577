// The bundled default model (samples/models/flashps-fill-small) loads and fills a sample photo
// plausibly: finite output, unmasked pixels untouched, and a masked-region error below that of
// filling with the mean colour. Its files' checksums are checked by the ctest
// "model.bundled_checksums" (sha256sum -c).
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "bench/classical_inpaint.h"
#include "core/image.h"
#include "core/image_metrics.h"
#include "core/mask_ops.h"
#include "pipeline/flux_inpaint_pipeline.h"
#include "pipeline/image_tensors.h"

using namespace flashps;

namespace {

const std::string kModel = std::string(FLASHPS_SOURCE_DIR) + "/samples/models/flashps-fill-small";

double masked_mse(const Image& result, const Image& truth, const Image& mask) {
  at::Tensor a = image_to_tensor(result), b = image_to_tensor(truth), m = mask_to_tensor(mask);
  return ((a - b).pow(2) * m.unsqueeze(0)).sum().item<double>() / (3 * m.sum().item<double>());
}

}  // namespace

TEST_CASE("the bundled model fills a sample photo better than its mean colour", "[models][bundled]") {
  REQUIRE(std::filesystem::exists(kModel + "/transformer/config.json"));
  auto pipeline = FluxInpaintPipeline::load(kModel, at::kFloat);
  REQUIRE(pipeline->is_fill());
  REQUIRE(pipeline->is_unconditional());

  for (const char* name : {"fig", "mountains"}) {
    INFO(name);
    const Image image = to_rgb(read_image(std::string(FLASHPS_SOURCE_DIR) + "/samples/images/" + name + ".jpg"));
    const Image mask = binarize_mask(read_image(std::string(FLASHPS_SOURCE_DIR) + "/samples/masks/" + name + ".png"));
    EditRequest request;
    request.image = image;
    request.mask = mask;
    request.seed = 1;
    request.steps = 12;
    request.mode = ComputeMode::full;
    EditResult result = pipeline->edit(request);
    REQUIRE(result.image.width == image.width);
    REQUIRE(result.image.height == image.height);
    CHECK(at::isfinite(image_to_tensor(result.image)).all().item<bool>());
    const double model_error = masked_mse(result.image, image, mask);
    const double mean_fill_error = masked_mse(bench::mean_colour_fill(image, mask), image, mask);
    INFO("model " << model_error << " mean fill " << mean_fill_error);
    CHECK(model_error < mean_fill_error);
    // Unmasked pixels are the template's.
    const at::Tensor keep = mask_to_tensor(mask) < 0.5;
    CHECK(((image_to_tensor(result.image) - image_to_tensor(image)).abs().amax(0) * keep).max().item<float>() == 0.0f);
  }
}
