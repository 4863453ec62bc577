// The deblocking filter of the patch autoencoder's decoder: small steps between flat blocks
// become ramps, real edges and texture are kept, and photos decode as before.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <cmath>

#include "core/diagnostics/error.h"
#include "core/image/image.h"
#include "core/mask/mask_ops.h"
#include "models/vae/deblocking_filter.h"
#include "models/vae/patch_autoencoder.h"
#include "pipeline/image_tensors.h"
#include "support/source_dir.h"

using namespace flashps;

namespace {

// Mean absolute difference between neighbouring columns, at block borders and elsewhere.
std::pair<double, double> border_and_inner_steps(const at::Tensor& image, int64_t block) {
  const at::Tensor steps = (image.narrow(3, 1, image.size(3) - 1) - image.narrow(3, 0, image.size(3) - 1)).abs();
  at::Tensor at_border = at::zeros({image.size(3) - 1}, at::kBool);
  for (int64_t x = block; x < image.size(3); x += block) at_border[x - 1] = true;
  const at::Tensor per_column = steps.mean({0, 1, 2});
  return {per_column.masked_select(at_border).mean().item<double>(),
          per_column.masked_select(at_border.logical_not()).mean().item<double>()};
}

double psnr(const at::Tensor& a, const at::Tensor& b) {  // images in [-1, 1]
  return 10 * std::log10(4.0 / (a - b).pow(2).mean().item<double>());
}

}  // namespace

TEST_CASE("deblocking turns small steps between flat blocks into ramps", "[vae][deblocking]") {
  DeblockingFilter filter;
  filter.block = 8;
  auto generator = at::detail::createCPUGenerator(11);
  // Flat 8x8 blocks whose levels differ by less than the edge threshold (a token mosaic).
  at::Tensor levels = (at::rand({1, 3, 6, 6}, generator) - 0.5) * 0.25;  // steps below 0.25
  at::Tensor mosaic = levels.repeat_interleave(8, 2).repeat_interleave(8, 3);
  at::Tensor filtered = apply_deblocking_filter(mosaic, filter);
  auto [border_before, inner_before] = border_and_inner_steps(mosaic, 8);
  auto [border_after, inner_after] = border_and_inner_steps(filtered, 8);
  CHECK(inner_before == 0);
  CHECK(border_after < 0.2 * border_before);
  // The step is spread, not removed: block means move by a fraction of the steps around them
  // (at most 10/72 of each of four borders' steps), the image stays in range.
  const at::Tensor means_before = at::avg_pool2d(mosaic, 8), means_after = at::avg_pool2d(filtered, 8);
  CHECK((means_after - means_before).abs().max().item<double>() < 4 * 10.0 / 72 * 0.25);
  CHECK(filtered.abs().max().item<double>() <= mosaic.abs().max().item<double>() + 1e-6);
  // Pixels more than half a block from any border are untouched.
  CHECK(at::equal(filtered.narrow(3, 0, 4).narrow(2, 0, 4), mosaic.narrow(3, 0, 4).narrow(2, 0, 4)));

  SECTION("large steps are edges and stay") {
    at::Tensor edge = at::full({1, 3, 16, 16}, -0.5);
    edge.narrow(3, 8, 8).fill_(0.5);
    CHECK(at::equal(apply_deblocking_filter(edge, filter), edge));
  }
  SECTION("texture is not flat and stays") {
    at::Tensor texture = mosaic + (at::rand(mosaic.sizes(), generator) - 0.5) * 0.4;
    at::Tensor change = (apply_deblocking_filter(texture, filter) - texture).abs();
    // Only where both sides happen to be flat by chance, and then by little.
    CHECK(change.gt(0).to(at::kFloat).mean().item<double>() < 0.1);
    CHECK(change.mean().item<double>() < 0.005);
  }
  SECTION("off, or a bad block size") {
    CHECK(at::equal(apply_deblocking_filter(mosaic, DeblockingFilter{}), mosaic));
    DeblockingFilter odd;
    odd.block = 7;
    CHECK_THROWS_AS(apply_deblocking_filter(mosaic, odd), Error);
  }
}

TEST_CASE("the bundled decoder's deblocking leaves photos' reconstructions as they were", "[vae][deblocking][bundled]") {
  auto autoencoder = load_patch_autoencoder(flashps::test::source_dir() + "/samples/models/flashps-fill-small/vae");
  REQUIRE(autoencoder->config().deblocking.block == 8);
  for (const char* name : {"fig", "mountains"}) {
    INFO(name);
    // At the model's 256 px, as the pipeline decodes its windows (the JPEG files' own 8x8 grid,
    // which the filter would soften, does not survive resampling).
    const at::Tensor photo = image_to_tensor(resize_bilinear(
        read_image(flashps::test::source_dir() + "/samples/images/" + name + ".jpg"), 256, 256)).unsqueeze(0);
    const at::Tensor latents = autoencoder->encode_to_latents(photo);
    const double plain = psnr(autoencoder->decode_latents_unfiltered(latents), photo);
    const double deblocked = psnr(autoencoder->decode_latents(latents), photo);
    CHECK(plain > 30);
    // 0.4 dB in the measurements: a few flat borders of the photos are softened. Pipelines paste
    // unmasked pixels back, so only generated pixels reach the output through the decoder.
    CHECK(deblocked > plain - 0.5);
  }
}
