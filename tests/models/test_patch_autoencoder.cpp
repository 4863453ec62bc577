// The fixed pixel-unshuffle autoencoder of the bundled model: exact round trip, the channel
// order of diffusers' mask packing, checked configs, and loading by "_class_name".
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/diagnostics/error.h"
#include "models/vae/autoencoder_kl.h"
#include "core/files/tensor_io.h"
#include "models/vae/patch_autoencoder.h"
#include "support/temp_dir.h"

using namespace flashps;
using flashps::test::TempDir;

TEST_CASE("patch autoencoder round-trips exactly and normalises", "[vae][patch]") {
  PatchAutoencoderConfig config;
  config.patch_size = 4;
  config.scaling_factor = 2.0;
  config.shift_factor = 0.25;
  PatchAutoencoder autoencoder(config);
  REQUIRE(autoencoder.latent_channels() == 48);
  REQUIRE(autoencoder.scale_factor() == 4);

  auto generator = at::detail::createCPUGenerator(5);
  at::Tensor image = at::rand({2, 3, 16, 24}, generator) * 2 - 1;
  at::Tensor latents = autoencoder.encode_to_latents(image);
  REQUIRE(latents.sizes() == at::IntArrayRef({2, 48, 4, 6}));
  // Channel c*16 + i*4 + j of latent pixel (y, x) is pixel (4y+i, 4x+j) of channel c.
  CHECK(latents[1][1 * 16 + 2 * 4 + 3][2][5].item<float>() ==
        Approx((image[1][1][4 * 2 + 2][4 * 5 + 3].item<float>() - 0.25) * 2.0));
  CHECK((autoencoder.decode_latents(latents) - image).abs().max().item<float>() < 1e-6f);
  CHECK_THROWS_AS(autoencoder.encode_to_latents(at::zeros({1, 3, 10, 16})), Error);
  CHECK_THROWS_AS(autoencoder.decode_latents(at::zeros({1, 47, 2, 2})), Error);
}

TEST_CASE("autoencoder folders load by class name, and bad configs name the file", "[vae][patch]") {
  TempDir scratch;
  const auto config_path = scratch.path() / "config.json";
  auto write = [&](const nlohmann::json& json) { std::ofstream(config_path) << json.dump(); };

  write({{"_class_name", "FlashPSPatchAutoencoder"}, {"patch_size", 2}, {"scaling_factor", 1.5}});
  auto loaded = load_image_autoencoder(scratch.path().string());
  REQUIRE(loaded->latent_channels() == 12);
  REQUIRE(loaded->scale_factor() == 2);
  REQUIRE(dynamic_cast<PatchAutoencoder*>(loaded.get()) != nullptr);

  write({{"_class_name", "FlashPSPatchAutoencoder"}, {"patch_size", 0}});
  CHECK_THROWS_WITH(load_image_autoencoder(scratch.path().string()),
                    Catch::Contains("config.json") && Catch::Contains("patch_size"));
  write({{"_class_name", "FlashPSPatchAutoencoder"}, {"scaling_factor", "big"}});
  CHECK_THROWS_WITH(load_image_autoencoder(scratch.path().string()), Catch::Contains("config.json"));
  write({{"_class_name", "AutoencoderTiny"}});
  CHECK_THROWS_WITH(load_image_autoencoder(scratch.path().string()),
                    Catch::Contains("AutoencoderTiny") && Catch::Contains("unsupported"));
  std::filesystem::remove(config_path);
  CHECK_THROWS_WITH(load_image_autoencoder(scratch.path().string()), Catch::Contains("no config.json"));
}

TEST_CASE("a fitted patch projection keeps the main components and round-trips through a folder",
          "[vae][patch]") {
  // Smooth images: most patch variance lies in few components.
  auto generator = at::detail::createCPUGenerator(9);
  std::vector<at::Tensor> images;
  for (int i = 0; i < 8; ++i) {
    at::Tensor coarse = at::rand({1, 3, 4, 4}, generator) * 2 - 1;
    images.push_back(at::upsample_bilinear2d(coarse, {32, 32}, false)[0]);
  }
  auto fitted = fit_patch_autoencoder(images, 4, 12);
  REQUIRE(fitted->latent_channels() == 12);
  REQUIRE(fitted->config().projected());
  at::Tensor gram = fitted->projection().mm(fitted->projection().t());
  CHECK(at::allclose(gram, at::eye(12), 1e-4, 1e-4));
  at::Tensor batch = at::stack(images);
  at::Tensor latents = fitted->encode_to_latents(batch);
  CHECK(latents.std().item<double>() == Approx(1.0).margin(0.05));
  const double error = (fitted->decode_latents(latents) - batch).pow(2).mean().item<double>();
  CHECK(10 * std::log10(4.0 / error) > 35.0);  // smooth images: near-lossless with 12 of 48

  test::TempDir scratch;
  const std::string dir = scratch.file("vae");
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/config.json") << fitted->config().to_json().dump();
  CHECK_THROWS_WITH(load_image_autoencoder(dir), Catch::Contains("diffusion_pytorch_model.safetensors"));
  save_safetensors(dir + "/diffusion_pytorch_model.safetensors",
                   {{"projection", fitted->projection()}, {"mean", fitted->mean()}});
  auto loaded = load_image_autoencoder(dir);
  CHECK(at::allclose(loaded->encode_to_latents(batch), latents, 1e-5, 1e-6));
  save_safetensors(dir + "/diffusion_pytorch_model.safetensors", {{"projection", fitted->projection()}});
  CHECK_THROWS_WITH(load_image_autoencoder(dir), Catch::Contains("mean"));
}
