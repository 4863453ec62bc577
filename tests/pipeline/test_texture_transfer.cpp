// Texture transfer gives a smooth fill the fine detail of its surroundings: kept pixels stay, the
// masked region gains about the photo's detail where the surroundings have it and stays smooth
// where they are smooth, and a slightly different fill gets slightly different texture (so a
// cached replay matches the full computation).
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <cstring>

#include "core/diagnostics/error.h"
#include "core/metrics/image_metrics.h"
#include "pipeline/image_tensors.h"
#include "classical/texture_transfer.h"

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

namespace {

// Random 8-bit RGB noise (or a 1-channel mask that is zero): stand-ins for the area of a photo.
Image noise_image(int width, int height, uint64_t seed, int channels = 3) {
  auto generator = at::detail::createCPUGenerator(seed);
  const at::Tensor values = at::randint(0, 256, {height, width, channels}, generator, at::kByte);
  Image image(width, height, channels);
  std::memcpy(image.pixels.data(), values.data_ptr<uint8_t>(), image.pixels.size());
  return image;
}

// `small` copied into `large` at (x, y).
void place(Image& large, const Image& small, int x, int y) {
  for (int row = 0; row < small.height; ++row)
    std::memcpy(&large.pixels[(static_cast<size_t>(y + row) * large.width + x) * large.channels],
                &small.pixels[static_cast<size_t>(row) * small.width * small.channels],
                static_cast<size_t>(small.width) * small.channels);
}

}  // namespace

TEST_CASE("texture transfer of images reads only the mask's window", "[pipeline][texture]") {
  // A 24x20 hole in a 200x180 photo; with 16-pixel tiles the window is the hole and 64 pixels
  // around it, inside the photo. Sigma 6 blurs at half resolution.
  TextureTransferOptions options;
  options.tile = 16;
  options.detail_sigma = 6.0;
  const Image photo = noise_image(200, 180, 21);
  Image mask(200, 180, 1, 0), fill = photo;
  for (int y = 80; y < 100; ++y)
    for (int x = 90; x < 114; ++x) {
      mask.at(x, y) = 255;
      for (int c = 0; c < 3; ++c) fill.at(x, y, c) = static_cast<uint8_t>(60 + 40 * c);
    }
  const Image textured = transfer_texture(fill, photo, mask, options);
  // Equal to the tensor version on the whole image, and textured where masked only.
  const Image whole = tensor_to_image(transfer_texture(image_to_tensor(fill), image_to_tensor(photo),
                                                       mask_to_tensor(mask), options));
  CHECK(textured.pixels == whole.pixels);
  int changed = 0, changed_outside = 0;
  for (int y = 0; y < 180; ++y)
    for (int x = 0; x < 200; ++x)
      for (int c = 0; c < 3; ++c)
        if (textured.at(x, y, c) != fill.at(x, y, c)) (mask.at(x, y) ? changed : changed_outside)++;
  CHECK(changed > 24 * 20);
  CHECK(changed_outside == 0);

  // The same photo inside a larger one with other content all around: the window sees the same
  // pixels, so the result is the same, byte for byte.
  Image large_photo = noise_image(460, 330, 22), large_mask(460, 330, 1, 0);
  Image large_fill = large_photo;
  place(large_photo, photo, 150, 70);
  place(large_fill, fill, 150, 70);
  place(large_mask, mask, 150, 70);
  const Image large_textured = transfer_texture(large_fill, large_photo, large_mask, options);
  bool same = true;
  for (int y = 0; y < 180; ++y)
    for (int x = 0; x < 200; ++x)
      for (int c = 0; c < 3; ++c) same = same && large_textured.at(x + 150, y + 70, c) == textured.at(x, y, c);
  CHECK(same);

  CHECK(transfer_texture(fill, photo, Image(200, 180, 1, 0), options).pixels == fill.pixels);  // nothing masked
  CHECK_THROWS_AS(transfer_texture(fill, photo, Image(100, 180, 1, 0), options), Error);
}
