// Texture transfer gives a smooth fill the fine detail of its surroundings: kept pixels stay, the
// masked region gains about the photo's detail where the surroundings have it and stays smooth
// where they are smooth, and a slightly different fill gets slightly different texture (so a
// cached replay matches the full computation).
#include <ATen/ATen.h>

#include <catch2/catch.hpp>

#include "core/error.h"
#include "core/image_metrics.h"
#include "pipeline/texture_transfer.h"

using namespace flashps;

namespace {

// Left half: a fine random texture around -0.2; right half: flat +0.4. [3, 64, 64].
at::Tensor two_region_photo() {
  auto generator = at::detail::createCPUGenerator(3);
  at::Tensor image = at::full({3, 64, 64}, 0.4f);
  image.narrow(2, 0, 32).copy_(at::rand({3, 64, 32}, generator) * 0.4 - 0.4);
  return image;
}

// A box in the middle of each half: rows 24-39, columns 8-23 and 40-55.
at::Tensor two_box_mask() {
  at::Tensor mask = at::zeros({64, 64});
  mask.narrow(0, 24, 16).narrow(1, 8, 16).fill_(1);
  mask.narrow(0, 24, 16).narrow(1, 40, 16).fill_(1);
  return mask;
}

// The region's smooth colours (what a small model would give): the photo blurred by region.
at::Tensor smooth_fill(const at::Tensor& photo) {
  at::Tensor fill = photo.clone();
  fill.narrow(2, 0, 32).fill_(-0.2);
  return fill;
}

}  // namespace

TEST_CASE("texture transfer copies the surroundings' detail into the fill", "[pipeline][texture]") {
  const at::Tensor photo = two_region_photo(), mask = two_box_mask(), fill = smooth_fill(photo);
  TextureTransferOptions options;
  options.detail_sigma = 1.0;
  options.tile = 8;
  options.detail_strength = 1.0;
  const at::Tensor textured = transfer_texture(fill, photo, mask, options);
  REQUIRE(textured.sizes() == fill.sizes());
  // Kept pixels are the fill's.
  CHECK(((textured - fill).abs().amax(0) * (1 - mask)).max().item<float>() == 0.0f);
  // The textured half's hole gets detail like its surroundings; the flat half's stays flat.
  at::Tensor left_hole = at::zeros({64, 64}), right_hole = at::zeros({64, 64});
  left_hole.narrow(0, 24, 16).narrow(1, 8, 16).fill_(1);
  right_hole.narrow(0, 24, 16).narrow(1, 40, 16).fill_(1);
  const double photo_detail = detail_energy(photo, left_hole);
  CHECK(detail_energy(fill, left_hole) == Approx(0.0).margin(1e-9));
  CHECK(detail_energy(textured, left_hole) > 0.5 * photo_detail);
  CHECK(detail_energy(textured, left_hole) < 1.5 * photo_detail);
  CHECK(detail_energy(textured, right_hole) < 0.05 * photo_detail);
  // The colours stay the fill's: the copied detail has no offset.
  CHECK(textured.narrow(1, 24, 16).narrow(2, 8, 16).mean().item<double>() == Approx(-0.2).margin(0.03));
  CHECK(textured.narrow(1, 24, 16).narrow(2, 40, 16).mean().item<double>() == Approx(0.4).margin(0.01));
}

TEST_CASE("texture transfer changes little when the fill changes little", "[pipeline][texture]") {
  const at::Tensor photo = two_region_photo(), mask = two_box_mask(), fill = smooth_fill(photo);
  TextureTransferOptions options;
  options.detail_sigma = 1.0;
  options.tile = 8;
  auto generator = at::detail::createCPUGenerator(5);
  const at::Tensor nudged = fill + (at::rand(fill.sizes(), generator) - 0.5) * 0.01 * mask;
  const at::Tensor a = transfer_texture(fill, photo, mask, options);
  const at::Tensor b = transfer_texture(nudged, photo, mask, options);
  // The difference stays of the order of the nudge (0.005), far below the detail (about 0.1).
  CHECK((a - b).abs().max().item<double>() < 0.02);
}

TEST_CASE("texture transfer leaves the fill alone when it cannot help, and checks its input", "[pipeline][texture]") {
  const at::Tensor photo = two_region_photo(), fill = smooth_fill(photo);
  CHECK(at::equal(transfer_texture(fill, photo, at::zeros({64, 64})), fill));  // nothing masked
  CHECK(at::equal(transfer_texture(fill, photo, at::ones({64, 64})), fill));   // no kept source tile
  CHECK_THROWS_AS(transfer_texture(fill, photo, at::zeros({32, 64})), Error);
  TextureTransferOptions odd;
  odd.tile = 7;
  CHECK_THROWS_AS(transfer_texture(fill, photo, two_box_mask(), odd), Error);
}
