// Model configs are untrusted: absurd sizes are refused by bounds, and sizes that disagree with
// the weights' headers are refused before any module is allocated (every model family).
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <torch/nn/module.h>

#include "core/diagnostics/error.h"
#include "core/files/tensor_io.h"
#include "models/clip/clip_text_model.h"
#include "models/flux/flux_transformer.h"
#include "models/random/random_weights.h"
#include "models/unet/unet_config.h"
#include "models/unet/unet_model.h"
#include "models/vae/autoencoder_kl.h"
#include "models/vae/autoencoder_kl_config.h"
#include "support/temp_dir.h"
#include "support/tiny_flux.h"

using namespace flashps;

namespace {

// Writes `module`'s random weights as `weights_name` and `config` as config.json into `folder`.
std::string write_folder(const test::TempDir& dir, const std::string& folder, torch::nn::Module& module,
                         const nlohmann::json& config, const std::string& weights_name) {
  fill_random_weights(module, 5);
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  for (const auto& item : module.named_parameters(true)) tensors.emplace_back(item.key(), item.value());
  std::filesystem::create_directories(dir.path() / folder);
  save_safetensors(dir.file(folder + "/" + weights_name), tensors);
  std::ofstream(dir.file(folder + "/config.json")) << config.dump();
  return dir.file(folder);
}

// Rewrites one field of <folder>/config.json.
void set_config(const std::string& folder, const std::string& key, const nlohmann::json& value) {
  nlohmann::json config;
  std::ifstream(folder + "/config.json") >> config;
  config[key] = value;
  std::ofstream(folder + "/config.json") << config.dump();
}

// The message of the CorruptDataError that `load` throws.
template <typename Load>
std::string load_error(Load load) {
  try {
    load();
  } catch (const CorruptDataError& error) {
    return error.what();
  }
  FAIL("loading should have failed with CorruptDataError");
  return "";
}

nlohmann::json tiny_unet_config() {
  return {{"in_channels", 4},
          {"out_channels", 4},
          {"down_block_types", {"CrossAttnDownBlock2D", "DownBlock2D"}},
          {"up_block_types", {"UpBlock2D", "CrossAttnUpBlock2D"}},
          {"block_out_channels", {8, 16}},
          {"layers_per_block", 1},
          {"norm_num_groups", 4},
          {"cross_attention_dim", 8},
          {"attention_head_dim", 2}};
}

nlohmann::json tiny_vae_config() {
  return {{"in_channels", 3},     {"out_channels", 3},    {"block_out_channels", {8, 8}}, {"layers_per_block", 1},
          {"latent_channels", 4}, {"norm_num_groups", 4}, {"scaling_factor", 0.5}};
}

nlohmann::json tiny_clip_config() {
  return {{"vocab_size", 10},       {"hidden_size", 8},         {"intermediate_size", 12},
          {"num_hidden_layers", 2}, {"num_attention_heads", 2}, {"max_position_embeddings", 6}};
}

}  // namespace

TEST_CASE("Flux configs with absurd sizes are refused by bounds, naming the file, field and range",
          "[models][config]") {
  test::TempDir dir;
  const FluxConfig config = test::tiny_flux_config(8, 8, 1, 1);
  FluxTransformer model(config);
  const std::string folder = write_folder(dir, "flux", *model, config.to_json(), "diffusion_pytorch_model.safetensors");
  const std::string source = folder + "/config.json: ";
  set_config(folder, "num_layers", 1000000000);
  CHECK(load_error([&] { load_flux_transformer(folder, at::kFloat); }) ==
        source + "num_layers is 1000000000; it must be 0 to 1024");
  set_config(folder, "num_layers", 1);
  set_config(folder, "in_channels", int64_t{1} << 31);
  CHECK(load_error([&] { load_flux_transformer(folder, at::kFloat); }) ==
        source + "in_channels is 2147483648; it must be 1 to 16384");
  set_config(folder, "in_channels", 8);
  set_config(folder, "num_attention_heads", 1 << 20);
  CHECK(load_error([&] { load_flux_transformer(folder, at::kFloat); }) ==
        source + "num_attention_heads is 1048576; it must be 1 to 1024");
  set_config(folder, "num_attention_heads", 2);
  CHECK_NOTHROW(load_flux_transformer(folder, at::kFloat));
}

TEST_CASE("Flux config sizes must agree with the weights' shapes before the model is allocated", "[models][config]") {
  test::TempDir dir;
  const FluxConfig config = test::tiny_flux_config(8, 8, 1, 1);
  FluxTransformer model(config);
  const std::string folder = write_folder(dir, "flux", *model, config.to_json(), "diffusion_pytorch_model.safetensors");
  const std::string source = folder + "/config.json: ", weights = folder + "/diffusion_pytorch_model.safetensors";
  set_config(folder, "num_layers", 900);
  CHECK(load_error([&] { load_flux_transformer(folder, at::kFloat); }) ==
        source + "num_layers is 900 but " + weights + " holds 1 transformer_blocks (transformer_blocks.N.*)");
  set_config(folder, "num_layers", 1);
  set_config(folder, "num_single_layers", 0);
  CHECK(load_error([&] { load_flux_transformer(folder, at::kFloat); }) ==
        source + "num_single_layers is 0 but " + weights +
            " holds 1 single_transformer_blocks (single_transformer_blocks.N.*)");
  set_config(folder, "num_single_layers", 1);
  set_config(folder, "in_channels", 16000);
  CHECK(load_error([&] { load_flux_transformer(folder, at::kFloat); }) ==
        source + "the weights disagree with in_channels, num_attention_heads and attention_head_dim: " + weights +
            " has x_embedder.weight [16, 8], the config implies [16, 16000]");
  set_config(folder, "in_channels", 8);
  set_config(folder, "joint_attention_dim", 40000);
  CHECK(load_error([&] { load_flux_transformer(folder, at::kFloat); }) ==
        source + "the weights disagree with joint_attention_dim: " + weights +
            " has context_embedder.weight [16, 16], the config implies [16, 40000]");
}

TEST_CASE("UNet configs: bounds, then consistency with the weights", "[models][config][unet]") {
  test::TempDir dir;
  UNet2DConditionModel model(parse_unet_config(tiny_unet_config(), "tiny"));
  const std::string folder =
      write_folder(dir, "unet", *model, tiny_unet_config(), "diffusion_pytorch_model.safetensors");
  const std::string source = folder + "/config.json: ", weights = folder + "/diffusion_pytorch_model.safetensors";
  CHECK_NOTHROW(load_unet(folder));
  set_config(folder, "layers_per_block", 1000000000);
  CHECK(load_error([&] { load_unet(folder); }) == source + "layers_per_block is 1000000000; it must be 1 to 64");
  set_config(folder, "layers_per_block", 3);
  CHECK(load_error([&] { load_unet(folder); }) ==
        source + "layers_per_block is 3 but " + weights + " holds 1 down_blocks.0.resnets (down_blocks.0.resnets.N.*)");
  set_config(folder, "layers_per_block", 1);
  set_config(folder, "block_out_channels", {8, int64_t{1} << 31});
  CHECK(load_error([&] { load_unet(folder); }) ==
        source + "block_out_channels[i] is 2147483648; it must be 1 to 16384");
  set_config(folder, "block_out_channels", {8, 16});
  set_config(folder, "cross_attention_dim", 4096);
  CHECK(load_error([&] { load_unet(folder); }) ==
        source + "the weights disagree with cross_attention_dim: " + weights +
            " has down_blocks.0.attentions.0.transformer_blocks.0.attn2.to_k.weight [8, 8], the config implies "
            "[8, 4096]");
}

TEST_CASE("AutoencoderKL configs: bounds, then consistency with the weights", "[models][config][vae]") {
  test::TempDir dir;
  AutoencoderKL model(parse_autoencoder_kl_config(tiny_vae_config(), "tiny"));
  const std::string folder = write_folder(dir, "vae", model, tiny_vae_config(), "diffusion_pytorch_model.safetensors");
  const std::string source = folder + "/config.json: ", weights = folder + "/diffusion_pytorch_model.safetensors";
  CHECK_NOTHROW(load_autoencoder_kl(folder));
  set_config(folder, "latent_channels", int64_t{1} << 31);
  CHECK(load_error([&] { load_autoencoder_kl(folder); }) ==
        source + "latent_channels is 2147483648; it must be 1 to 1024");
  set_config(folder, "latent_channels", 16);
  CHECK(load_error([&] { load_autoencoder_kl(folder); }) ==
        source + "the weights disagree with latent_channels and block_out_channels: " + weights +
            " has decoder.conv_in.weight [8, 4, 3, 3], the config implies [8, 16, 3, 3]");
  set_config(folder, "latent_channels", 4);
  set_config(folder, "layers_per_block", 40);
  CHECK(load_error([&] { load_autoencoder_kl(folder); }) ==
        source + "layers_per_block is 40 but " + weights +
            " holds 1 encoder.down_blocks.0.resnets (encoder.down_blocks.0.resnets.N.*)");
}

TEST_CASE("CLIP text configs: bounds, then consistency with the weights", "[models][config][clip]") {
  test::TempDir dir;
  ClipTextModel model(parse_clip_text_config(tiny_clip_config(), "tiny"));
  const std::string folder = write_folder(dir, "text_encoder", *model, tiny_clip_config(), "model.safetensors");
  const std::string source = folder + "/config.json: ", weights = folder + "/model.safetensors";
  CHECK_NOTHROW(load_clip_text_model(folder));
  set_config(folder, "num_hidden_layers", 1000000000);
  CHECK(load_error([&] { load_clip_text_model(folder); }) ==
        source + "num_hidden_layers is 1000000000; it must be 2 to 256");
  set_config(folder, "num_hidden_layers", 200);
  CHECK(load_error([&] { load_clip_text_model(folder); }) ==
        source + "num_hidden_layers is 200 but " + weights +
            " holds 2 text_model.encoder.layers (text_model.encoder.layers.N.*)");
  set_config(folder, "num_hidden_layers", 2);
  set_config(folder, "vocab_size", 1000000);
  CHECK(load_error([&] { load_clip_text_model(folder); }) ==
        source + "the weights disagree with vocab_size and hidden_size: " + weights +
            " has text_model.embeddings.token_embedding.weight [10, 8], the config implies [1000000, 8]");
}
