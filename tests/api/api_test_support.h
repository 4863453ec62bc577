// Shared by the C API tests: tiny random-weight models, images the tests own, RAII for handles,
// and struct buffers larger than the library's (to test the struct_size rules).
#pragma once
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "flashps/flashps.h"
#include "models/random/random_model.h"
#include "support/temp_dir.h"

namespace flashps::test::api {

// A random-weight Flux Fill model small enough that opening and a 2-step 32x32 edit take well
// under a second; `name` is its folder in `dir`.
inline std::string tiny_model(const TempDir& dir, const std::string& name = "model", uint64_t seed = 11) {
  RandomFluxModelSpec spec = small_fill_model_spec();
  spec.transformer.num_layers = 1;
  spec.transformer.num_single_layers = 1;
  spec.transformer.num_attention_heads = 2;
  spec.vae_config["block_out_channels"] = {8, 8, 8, 8};
  spec.text_tokens = 4;
  spec.seed = seed;
  const std::string path = dir.file(name);
  write_random_flux_model(path, spec);
  return path;
}

// An image the test owns; `view` points at `pixels` (keep the object alive while it is used).
struct OwnedImage {
  std::vector<uint8_t> pixels;
  flashps_image view{};
  OwnedImage(uint32_t width, uint32_t height, uint32_t channels, uint8_t fill = 0)
      : pixels(size_t{width} * height * channels, fill), view{width, height, channels, nullptr} {
    view.pixels = pixels.data();
  }
  OwnedImage(const OwnedImage&) = delete;
  OwnedImage& operator=(const OwnedImage&) = delete;
  uint8_t& at(uint32_t x, uint32_t y, uint32_t channel = 0) {
    return pixels[(size_t{y} * view.width + x) * view.channels + channel];
  }
};

// An RGB gradient (every pixel differs from its neighbours, so edits visibly change it) that
// `seed` shifts, so different seeds give different templates.
inline std::unique_ptr<OwnedImage> gradient(uint32_t width, uint32_t height, uint8_t seed = 0) {
  auto image = std::make_unique<OwnedImage>(width, height, 3);
  for (uint32_t y = 0; y < height; ++y)
    for (uint32_t x = 0; x < width; ++x) {
      image->at(x, y, 0) = static_cast<uint8_t>(x * 255 / width + seed);
      image->at(x, y, 1) = static_cast<uint8_t>(y * 255 / height);
      image->at(x, y, 2) = static_cast<uint8_t>((x + y + seed) % 256);
    }
  return image;
}

// 1-channel mask, 255 inside the size x size box at (x0, y0).
inline std::unique_ptr<OwnedImage> box_mask(uint32_t width, uint32_t height, uint32_t x0, uint32_t y0,
                                            uint32_t size) {
  auto mask = std::make_unique<OwnedImage>(width, height, 1);
  for (uint32_t y = y0; y < y0 + size && y < height; ++y)
    for (uint32_t x = x0; x < x0 + size && x < width; ++x) mask->at(x, y) = 255;
  return mask;
}

struct EditorCloser {
  void operator()(flashps_editor* editor) const { flashps_editor_close(editor); }
};
using EditorPtr = std::unique_ptr<flashps_editor, EditorCloser>;

struct StoreCloser {
  void operator()(flashps_store* store) const { flashps_store_close(store); }
};
using StorePtr = std::unique_ptr<flashps_store, StoreCloser>;

// Opens the store in `directory` with default parameters; the test fails if it cannot.
inline StorePtr open_store(const std::string& directory) {
  flashps_store_params params = flashps_store_default_params();
  params.directory = directory.c_str();
  flashps_store* store = nullptr;
  const flashps_status status = flashps_store_open(&params, &store);
  INFO(flashps_last_error());
  REQUIRE(status == FLASHPS_OK);
  return StorePtr(store);
}

// Opens `model_dir` with `params` (NULL: defaults); REQUIREs success, naming the error.
inline EditorPtr open_editor(const std::string& model_dir, const flashps_editor_params* params = nullptr) {
  flashps_editor* editor = nullptr;
  const flashps_status status = flashps_editor_open(model_dir.c_str(), params, &editor);
  INFO(flashps_last_error());
  REQUIRE(status == FLASHPS_OK);
  REQUIRE(editor != nullptr);
  return EditorPtr(editor);
}

// Edit params for fast tests: 2 steps, a fixed seed.
inline flashps_edit_params fast_params(uint64_t seed = 7) {
  flashps_edit_params params = flashps_edit_default_params();
  params.steps = 2;
  params.seed = seed;
  return params;
}

inline flashps_edit_stats empty_stats() {
  flashps_edit_stats stats{};
  stats.struct_size = sizeof(stats);
  return stats;
}

// A params struct as a newer caller would pass it: ours followed by `extra` bytes it knows.
template <typename Params>
struct Grown {
  Params params;
  unsigned char extra[16];
  explicit Grown(Params base, unsigned char extra_value = 0) : params(base) {
    std::memset(extra, extra_value, sizeof extra);
    params.struct_size = sizeof(Grown);
  }
};

inline std::string last_error() { return flashps_last_error(); }

}  // namespace flashps::test::api
