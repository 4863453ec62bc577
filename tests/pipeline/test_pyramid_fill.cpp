// The pyramid (push-pull) fill keeps kept pixels, fills holes with convex combinations of kept
// colours that follow their surroundings, and the Fill conditioning uses it only under the mask.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>

#include "core/diagnostics/error.h"
#include "models/vae/patch_autoencoder.h"
#include "pipeline/flux/fill_conditioning.h"
#include "pipeline/flux/flux_packing.h"
#include "classical/pyramid_fill.h"

using namespace flashps;

TEST_CASE("pyramid fill keeps kept pixels and fills holes within the kept colours", "[pipeline]") {
  auto generator = at::detail::createCPUGenerator(7);
  const at::Tensor image = at::rand({3, 37, 50}, generator) * 2 - 1;  // odd sizes: ragged pyramid levels
  at::Tensor mask = at::zeros({37, 50});
  mask.narrow(0, 5, 20).narrow(1, 10, 30).fill_(1);
  const at::Tensor filled = pyramid_fill(image, mask);
  REQUIRE(filled.sizes() == image.sizes());
  const at::Tensor kept = (mask == 0).unsqueeze(0).expand_as(image);
  CHECK(at::equal(filled.masked_select(kept), image.masked_select(kept)));
  for (int64_t channel = 0; channel < 3; ++channel) {
    const at::Tensor kept_values = image[channel].masked_select(mask == 0);
    const at::Tensor hole_values = filled[channel].masked_select(mask > 0);
    CHECK(hole_values.min().item<float>() >= kept_values.min().item<float>() - 1e-5f);
    CHECK(hole_values.max().item<float>() <= kept_values.max().item<float>() + 1e-5f);
  }
  CHECK(filled.isfinite().all().item<bool>());
}

TEST_CASE("pyramid fill continues the colours around a hole", "[pipeline]") {
  // Left half red, right half blue, a hole across the border: the hole's left side fills red,
  // its right side blue, not the image's mean colour.
  at::Tensor image = at::zeros({3, 64, 64});
  image[0].narrow(1, 0, 32).fill_(1);
  image[2].narrow(1, 32, 32).fill_(1);
  at::Tensor mask = at::zeros({64, 64});
  mask.narrow(0, 16, 32).narrow(1, 8, 48).fill_(1);
  const at::Tensor filled = pyramid_fill(image, mask);
  CHECK(filled[0][32][10].item<float>() > 0.8f);
  CHECK(filled[2][32][10].item<float>() < 0.2f);
  CHECK(filled[2][32][53].item<float>() > 0.8f);
  CHECK(filled[0][32][53].item<float>() < 0.2f);
  // A flat image stays flat, whatever the mask.
  const at::Tensor grey = at::full({3, 20, 30}, 0.25);
  CHECK(at::allclose(pyramid_fill(grey, (at::rand({20, 30}) > 0.3).to(at::kFloat)), grey));
}

TEST_CASE("pyramid fill handles a full mask and refuses mismatched shapes", "[pipeline]") {
  const at::Tensor image = at::rand({3, 16, 16});
  CHECK(at::equal(pyramid_fill(image, at::ones({16, 16})), at::zeros({3, 16, 16})));
  CHECK(at::equal(pyramid_fill(image, at::zeros({16, 16})), image));
  CHECK_THROWS_AS(pyramid_fill(image, at::zeros({16, 15})), Error);
  CHECK_THROWS_AS(pyramid_fill(image[0], at::zeros({16, 16})), Error);
}

TEST_CASE("the pyramid Fill conditioning differs from the neutral one only under the mask", "[pipeline]") {
  PatchAutoencoderConfig config;
  config.patch_size = 2;
  config.in_channels = 3;
  const PatchAutoencoder autoencoder(config);
  const at::Tensor image = at::rand({3, 32, 32}) * 2 - 1;
  at::Tensor mask = at::zeros({32, 32});
  mask.narrow(0, 0, 8).narrow(1, 0, 8).fill_(1);  // exactly the first two tokens of the first row (4x4 px each)
  const at::Tensor neutral = fill_conditioning(autoencoder, image, mask, MaskedImageFill::neutral);
  const at::Tensor pyramid = fill_conditioning(autoencoder, image, mask, MaskedImageFill::pyramid);
  REQUIRE(neutral.sizes() == pyramid.sizes());
  const at::Tensor token_masked = pack_fill_mask(mask, autoencoder.scale_factor()).amax(1) > 0.5;
  const at::Tensor unmasked_rows = at::nonzero(~token_masked).squeeze(1);
  const at::Tensor masked_rows = at::nonzero(token_masked).squeeze(1);
  REQUIRE(masked_rows.numel() == 4);  // 8x8 px = 2x2 tokens of 4x4 px
  CHECK(at::allclose(neutral.index_select(0, unmasked_rows), pyramid.index_select(0, unmasked_rows)));
  CHECK_FALSE(at::allclose(neutral.index_select(0, masked_rows), pyramid.index_select(0, masked_rows)));
  CHECK(parse_masked_image_fill("pyramid", "x") == MaskedImageFill::pyramid);
  CHECK(masked_image_fill_name(MaskedImageFill::neutral) == "neutral");
  CHECK_THROWS_WITH(parse_masked_image_fill("telea", "model_index.json"),
                    Catch::Contains("model_index.json") && Catch::Contains("telea"));
}
