// A very small random Flux Fill model and synthetic images, for tests of the pipeline and the
// serving layer: their logic, not the pictures, is under test.
#pragma once
#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "core/image/image.h"
#include "models/random/random_model.h"
#include "pipeline/edit_types.h"
#include "support/temp_dir.h"

namespace flashps::test {

inline std::string tiny_model(const TempDir& dir) {
  RandomFluxModelSpec spec = small_fill_model_spec();
  spec.transformer.num_layers = 1;
  spec.transformer.num_single_layers = 2;
  spec.transformer.num_attention_heads = 2;
  spec.vae_config["block_out_channels"] = {8, 8, 8, 8};
  spec.text_tokens = 4;
  spec.seed = 11;
  const std::string path = dir.file("model");
  write_random_flux_model(path, spec);
  return path;
}

inline Image gradient_image(int width, int height) {
  Image image(width, height, 3);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      image.at(x, y, 0) = static_cast<uint8_t>(x * 255 / width);
      image.at(x, y, 1) = static_cast<uint8_t>(y * 255 / height);
      image.at(x, y, 2) = static_cast<uint8_t>((x + y) % 256);
    }
  return image;
}

inline Image box_mask(int width, int height, int x0, int y0, int size) {
  Image mask(width, height, 1, 0);
  for (int y = y0; y < y0 + size && y < height; ++y)
    for (int x = x0; x < x0 + size && x < width; ++x) mask.at(x, y) = 255;
  return mask;
}

// An edit's notes, one per line, for Contains checks.
inline std::string joined_notes(const EditStats& stats) {
  std::string all;
  for (const std::string& note : stats.notes) all += note + "\n";
  return all;
}

inline int max_pixel_difference(const Image& a, const Image& b) {
  REQUIRE(a.pixels.size() == b.pixels.size());
  int worst = 0;
  for (size_t i = 0; i < a.pixels.size(); ++i) worst = std::max(worst, std::abs(int(a.pixels[i]) - int(b.pixels[i])));
  return worst;
}

inline EditRequest request_for(const Image& image, const Image& mask, uint64_t seed, int steps = 3) {
  EditRequest request;
  request.image = image;
  request.mask = mask;
  request.seed = seed;
  request.steps = steps;
  return request;
}

}  // namespace flashps::test
