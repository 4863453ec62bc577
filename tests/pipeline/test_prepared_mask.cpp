// An edit's mask is interpreted once (mask_values >= 128) and every form derives from that.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>

#include "core/mask/mask_ops.h"
#include "pipeline/prepared_mask.h"

using namespace flashps;

namespace {

// Red strokes on a transparent layer (how an RGBA painting app exports a mask): the left
// quarter of a 64x32 image.
Image painted_layer() {
  Image layer(64, 32, 4, 0);
  for (int y = 0; y < layer.height; ++y)
    for (int x = 0; x < 16; ++x) {
      uint8_t* pixel = &layer.pixels[(size_t(y) * layer.width + x) * 4];
      pixel[0] = 255;
      pixel[3] = 255;
    }
  return layer;
}

}  // namespace

TEST_CASE("an RGBA mask is estimated as it is processed", "[pipeline][mask]") {
  EditRequest request;
  request.image = Image(64, 32, 3, 128);
  request.mask = painted_layer();
  std::vector<std::string> notes;
  Image binary = edit_mask_at(request, 64, 32, notes);
  CHECK(notes.empty());
  REQUIRE(binary.channels == 1);
  CHECK(mask_ratio(binary) == Approx(0.25));
  CHECK(requested_mask_ratio(request) == Approx(0.25));  // the estimate serving routes by

  const PreparedMask mask = prepare_mask(binary, binary, /*latent_factor=*/8, /*pixels_per_token=*/16, 0);
  CHECK(mask.ratio() == Approx(requested_mask_ratio(request)));
  CHECK(mask.pixels.sizes() == at::IntArrayRef({32, 64}));
  CHECK(mask.tokens.grid_height == 2);
  CHECK(mask.tokens.grid_width == 4);
  // The latent form samples each latent's top-left pixel, as diffusers' nearest resize does.
  const at::Tensor nearest =
      at::upsample_nearest2d(mask.pixels.unsqueeze(0).unsqueeze(0), {4, 8}).squeeze(0).squeeze(0);
  CHECK(mask.latent.equal(nearest));
}

TEST_CASE("a mask of another size is resized to the image, with a note", "[pipeline][mask]") {
  EditRequest request;
  request.image = Image(128, 64, 3, 128);
  request.mask = painted_layer();
  std::vector<std::string> notes;
  Image binary = edit_mask_at(request, 128, 64, notes);
  CHECK(binary.width == 128);
  CHECK(binary.height == 64);
  CHECK(mask_ratio(binary) == Approx(0.25));
  REQUIRE(notes.size() == 1);
  CHECK(notes[0] == "mask is 64x32, image is 128x64: mask resized (nearest)");

  request.mask = Image();
  notes.clear();
  CHECK(mask_ratio(edit_mask_at(request, 16, 16, notes)) == 0.0);
  CHECK(requested_mask_ratio(request) == 0.0);
}
