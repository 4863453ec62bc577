#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "core/diagnostics/error.h"
#include "core/metrics/image_metrics.h"
#include "core/files/tensor_io.h"
#include "dev/fixture_runners.h"
#include "models/random/random_weights.h"
#include "models/vae/autoencoder_kl.h"
#include "models/vae/vae_blocks.h"
#include "support/fixture_report_checks.h"
#include "support/fixtures.h"

namespace {

using Catch::Contains;  // the string matcher (v2 and, through support/catch2_v3, v3)
using flashps::AutoencoderKL;
using flashps::AutoencoderKLConfig;
namespace fs = std::filesystem;

using flashps::test::require_all_cases_pass;

// A scratch folder removed at the end of the test.
struct TemporaryDirectory {
  fs::path path;
  TemporaryDirectory() {
    std::random_device random;
    path = fs::temp_directory_path() / ("flashps_vae_test_" + std::to_string(random()));
    fs::create_directories(path);
  }
  ~TemporaryDirectory() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

nlohmann::json tiny_config_json() {
  return {{"_class_name", "AutoencoderKL"},
          {"in_channels", 3},
          {"out_channels", 3},
          {"block_out_channels", {8, 16}},
          {"down_block_types", {"DownEncoderBlock2D", "DownEncoderBlock2D"}},
          {"up_block_types", {"UpDecoderBlock2D", "UpDecoderBlock2D"}},
          {"layers_per_block", 1},
          {"latent_channels", 4},
          {"norm_num_groups", 4},
          {"scaling_factor", 0.5},
          {"shift_factor", 0.25},
          {"use_quant_conv", true},
          {"use_post_quant_conv", false},
          {"some_future_key", "ignored"}};
}

void write_json(const fs::path& path, const nlohmann::json& value) {
  std::ofstream(path) << value.dump(2);
}

// Random weights for every parameter of a model built from `config`, leaving out `omitted_key`
// and adding `extra_key` if given.
void write_random_checkpoint(const AutoencoderKLConfig& config, const fs::path& path,
                             const std::string& omitted_key = "",
                             const std::string& extra_key = "") {
  at::manual_seed(7);
  AutoencoderKL model(config);
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  for (const auto& item : model.named_parameters()) {
    if (item.key() == omitted_key) continue;
    at::Tensor value = at::randn(item.value().sizes()) * 0.2;
    // Norm weights near one, as in trained models, keep activations in a sane range.
    const std::string& key = item.key();
    const bool is_norm_weight =
        key.find("norm") != std::string::npos && key.compare(key.size() - 7, 7, ".weight") == 0;
    if (is_norm_weight) value += 1.0;
    tensors.emplace_back(item.key(), value);
  }
  if (!extra_key.empty()) tensors.emplace_back(extra_key, at::zeros({4}));
  flashps::save_safetensors(path.string(), tensors);
}

// A complete diffusers-style VAE folder with the tiny config.
fs::path write_tiny_vae_folder(const TemporaryDirectory& scratch) {
  write_json(scratch.path / "config.json", tiny_config_json());
  write_random_checkpoint(flashps::parse_autoencoder_kl_config(tiny_config_json(), "tiny"),
                          scratch.path / "diffusion_pytorch_model.safetensors");
  return scratch.path;
}

double max_abs_difference(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(at::kFloat) - b.to(at::kFloat)).abs().max().item<double>();
}

}  // namespace

TEST_CASE("AutoencoderKL decodes large latents in tiles, small ones whole", "[vae][tiling]") {
  TemporaryDirectory scratch;
  auto model = flashps::load_autoencoder_kl(write_tiny_vae_folder(scratch).string());
  REQUIRE(model->decode_tiling());
  CHECK(model->decode_tiling()->tile_above == 128);  // 1024 image pixels at 8x
  at::manual_seed(3);
  const at::Tensor latents = at::randn({1, 4, 40, 36});
  const at::Tensor below_threshold = model->decode_latents(latents);
  model->set_decode_tiling(std::nullopt);
  const at::Tensor whole = model->decode_latents(latents);
  CHECK(at::equal(below_threshold, whole));
  model->set_decode_tiling(flashps::DecodeTiling{16, 6, 0});
  const at::Tensor tiled = model->decode_latents(latents);
  REQUIRE(tiled.sizes() == whole.sizes());
  CHECK(tiled.isfinite().all().item<bool>());
  CHECK_FALSE(at::equal(tiled, whole));  // tiles did run: their GroupNorm sees only the tile
}

TEST_CASE("AutoencoderKL matches diffusers on vae_sd_tiny", "[vae]") {
  FLASHPS_REQUIRE_FIXTURE(dir, "vae_sd_tiny");
  const auto set = flashps::dev::load_fixture_set(dir.string());
  auto report = flashps::dev::run_autoencoder_kl_fixture(set);
  REQUIRE_FALSE(set.cases.empty());
  REQUIRE(report.cases.size() == set.cases.size());
  require_all_cases_pass(report);
}

TEST_CASE("AutoencoderKL matches diffusers on vae_flux_tiny (no quant convs)", "[vae]") {
  FLASHPS_REQUIRE_FIXTURE(dir, "vae_flux_tiny");
  const auto set = flashps::dev::load_fixture_set(dir.string());
  auto report = flashps::dev::run_autoencoder_kl_fixture(set);
  REQUIRE_FALSE(set.cases.empty());
  REQUIRE(report.cases.size() == set.cases.size());
  require_all_cases_pass(report);
}

TEST_CASE("AutoencoderKL loads a diffusers folder and round-trips shapes", "[vae]") {
  TemporaryDirectory scratch;
  auto vae = flashps::load_autoencoder_kl(write_tiny_vae_folder(scratch).string());
  REQUIRE(vae->dtype() == at::kFloat);
  REQUIRE(vae->config().downscale_factor() == 2);

  at::manual_seed(1);
  at::Tensor image = at::rand({2, 3, 16, 24}) * 2 - 1;
  at::Tensor moments = vae->encode_moments(image);
  REQUIRE(moments.sizes() == at::IntArrayRef({2, 8, 8, 12}));
  REQUIRE(at::isfinite(moments).all().item<bool>());
  at::Tensor mean = vae->encode_mean(image);
  REQUIRE(at::equal(mean, moments.narrow(1, 0, 4)));

  at::Tensor latents = vae->encode_to_latents(image);
  REQUIRE(latents.scalar_type() == at::kFloat);
  REQUIRE(at::allclose(latents, (mean - 0.25) * 0.5, 1e-6, 1e-6));

  at::Tensor decoded = vae->decode(mean);
  REQUIRE(decoded.sizes() == at::IntArrayRef({2, 3, 16, 24}));
  REQUIRE(at::allclose(vae->decode_latents(latents), decoded, 1e-4, 1e-5));
}

TEST_CASE("AutoencoderKL treats batch rows independently", "[vae]") {
  TemporaryDirectory scratch;
  auto vae = flashps::load_autoencoder_kl(write_tiny_vae_folder(scratch).string());
  at::manual_seed(2);
  at::Tensor images = at::rand({3, 3, 8, 8}) * 2 - 1;
  at::Tensor batched = vae->encode_moments(images);
  for (int64_t row = 0; row < 3; ++row) {
    at::Tensor single = vae->encode_moments(images.narrow(0, row, 1));
    REQUIRE(max_abs_difference(single, batched.narrow(0, row, 1)) < 1e-5);
  }
  at::Tensor decoded = vae->decode(batched.narrow(1, 0, 4));
  at::Tensor single_decoded = vae->decode(batched.narrow(0, 2, 1).narrow(1, 0, 4));
  REQUIRE(max_abs_difference(decoded.narrow(0, 2, 1), single_decoded) < 1e-5);
}

TEST_CASE("AutoencoderKL runs in bfloat16 close to float32", "[vae]") {
  TemporaryDirectory scratch;
  const fs::path folder = write_tiny_vae_folder(scratch);
  auto vae32 = flashps::load_autoencoder_kl(folder.string(), at::kFloat);
  auto vae16 = flashps::load_autoencoder_kl(folder.string(), at::kBFloat16);
  REQUIRE(vae16->dtype() == at::kBFloat16);

  at::manual_seed(3);
  at::Tensor image = at::rand({1, 3, 16, 16}) * 2 - 1;
  at::Tensor moments16 = vae16->encode_moments(image);
  REQUIRE(moments16.scalar_type() == at::kBFloat16);
  at::Tensor moments32 = vae32->encode_moments(image);
  const double scale = moments32.abs().max().item<double>();
  CHECK(max_abs_difference(moments16, moments32) < 0.05 * scale);

  at::Tensor latent = moments32.narrow(1, 0, 4);
  at::Tensor decoded32 = vae32->decode(latent);
  at::Tensor decoded16 = vae16->decode(latent);
  CHECK(max_abs_difference(decoded16, decoded32) < 0.05 * decoded32.abs().max().item<double>());
  REQUIRE(vae16->decode_latents(latent).scalar_type() == at::kFloat);
}

TEST_CASE("A deep AutoencoderKL decodes in bfloat16 within 40 dB of float32", "[vae]") {
  // Random weights at fan-in scale over a decoder of SD's depth make large activations, as real
  // decoders do: LibTorch's bf16 and channels-last GroupNorm statistics lost them (7 dB at SD
  // size). Float32 statistics leave only bf16's own rounding.
  nlohmann::json config = tiny_config_json();
  config["block_out_channels"] = {32, 64, 64};
  config["down_block_types"] = {"DownEncoderBlock2D", "DownEncoderBlock2D", "DownEncoderBlock2D"};
  config["up_block_types"] = {"UpDecoderBlock2D", "UpDecoderBlock2D", "UpDecoderBlock2D"};
  config["layers_per_block"] = 2;
  config["norm_num_groups"] = 8;
  AutoencoderKL vae(flashps::parse_autoencoder_kl_config(config, "deep test VAE"));
  flashps::fill_random_weights(vae, 2);
  at::manual_seed(4);
  const at::Tensor latents = at::randn({1, 4, 16, 16});
  const at::Tensor reference = vae.decode_latents(latents);
  vae.to(at::kBFloat16);
  const at::Tensor decoded = vae.decode_latents(latents);
  const double range = (reference.max() - reference.min()).item<double>();
  CHECK(flashps::psnr(decoded[0], reference[0], range) >= 40.0);
}

TEST_CASE("AutoencoderKL loading is strict and names what is wrong", "[vae]") {
  TemporaryDirectory scratch;
  write_json(scratch.path / "config.json", tiny_config_json());
  const AutoencoderKLConfig config =
      flashps::parse_autoencoder_kl_config(tiny_config_json(), "tiny");
  const fs::path weights = scratch.path / "diffusion_pytorch_model.safetensors";

  SECTION("a missing parameter") {
    write_random_checkpoint(config, weights, "decoder.up_blocks.1.resnets.0.conv1.weight");
    REQUIRE_THROWS_AS(flashps::load_autoencoder_kl(scratch.path.string()), flashps::Error);
    REQUIRE_THROWS_WITH(
        flashps::load_autoencoder_kl(scratch.path.string()),
        Contains("missing") && Contains("decoder.up_blocks.1.resnets.0.conv1.weight"));
  }
  SECTION("post_quant_conv in the file although the config disables it") {
    write_random_checkpoint(config, weights, "", "post_quant_conv.bias");
    REQUIRE_THROWS_WITH(flashps::load_autoencoder_kl(scratch.path.string()),
                        Contains("unexpected") && Contains("post_quant_conv.bias"));
  }
  SECTION("no weights file") {
    REQUIRE_THROWS_WITH(flashps::load_autoencoder_kl(scratch.path.string()),
                        Contains("diffusion_pytorch_model.safetensors"));
  }
  SECTION("no config.json") {
    fs::remove(scratch.path / "config.json");
    REQUIRE_THROWS_WITH(flashps::load_autoencoder_kl(scratch.path.string()),
                        Contains("config.json"));
  }
}

TEST_CASE("AutoencoderKL config parsing names the file and key", "[vae]") {
  nlohmann::json config = tiny_config_json();
  SECTION("missing required key") {
    config.erase("latent_channels");
    REQUIRE_THROWS_WITH(flashps::parse_autoencoder_kl_config(config, "vae/config.json"),
                        Contains("vae/config.json") && Contains("latent_channels"));
  }
  SECTION("null shift_factor means no shift; defaults apply") {
    config["shift_factor"] = nullptr;
    config.erase("use_quant_conv");
    const auto parsed = flashps::parse_autoencoder_kl_config(config, "vae/config.json");
    REQUIRE(parsed.shift_factor == 0.0);
    REQUIRE(parsed.use_quant_conv);
    REQUIRE_FALSE(parsed.use_post_quant_conv);
    REQUIRE(parsed.mid_block_add_attention);
  }
  SECTION("channels not divisible by the group count") {
    config["norm_num_groups"] = 3;
    REQUIRE_THROWS_WITH(flashps::parse_autoencoder_kl_config(config, "vae/config.json"),
                        Contains("norm_num_groups"));
  }
  SECTION("another VAE class") {
    config["_class_name"] = "AutoencoderTiny";
    REQUIRE_THROWS_WITH(flashps::parse_autoencoder_kl_config(config, "vae/config.json"),
                        Contains("AutoencoderTiny"));
  }
  SECTION("wrong value type") {
    config["layers_per_block"] = "two";
    REQUIRE_THROWS_WITH(flashps::parse_autoencoder_kl_config(config, "vae/config.json"),
                        Contains("layers_per_block"));
  }
}

TEST_CASE("AutoencoderKL without mid-block attention has no attention parameters", "[vae]") {
  nlohmann::json json = tiny_config_json();
  json["mid_block_add_attention"] = false;
  AutoencoderKL model(flashps::parse_autoencoder_kl_config(json, "config.json"));
  for (const auto& item : model.named_parameters())
    REQUIRE(item.key().find("attentions") == std::string::npos);
  REQUIRE(model.named_parameters().contains("encoder.mid_block.resnets.1.conv2.weight"));
  REQUIRE(model.named_parameters().contains("decoder.up_blocks.0.upsamplers.0.conv.weight"));
  // Up blocks have layers_per_block + 1 resnets, down blocks layers_per_block.
  REQUIRE(model.named_parameters().contains("decoder.up_blocks.1.resnets.1.norm1.weight"));
  REQUIRE_FALSE(model.named_parameters().contains("encoder.down_blocks.1.resnets.1.norm1.weight"));
  REQUIRE_FALSE(model.named_parameters().contains("decoder.up_blocks.1.upsamplers.0.conv.weight"));
  REQUIRE_FALSE(model.named_parameters().contains("post_quant_conv.weight"));
}

TEST_CASE("VAE mid-block attention matches a direct computation, chunked or not", "[vae]") {
  at::manual_seed(6);
  flashps::vae::SpatialSelfAttention attention(4, 2, 1e-6);
  {
    at::NoGradGuard no_grad;
    for (auto& parameter : attention.parameters()) parameter.normal_(0.0, 0.5);
  }
  const auto parameters = attention.named_parameters();
  auto reference = [&](const at::Tensor& input) {
    const int64_t batch = input.size(0), channels = input.size(1);
    at::Tensor normed = at::group_norm(input, 2, parameters["group_norm.weight"],
                                       parameters["group_norm.bias"], 1e-6);
    at::Tensor tokens = normed.flatten(2).transpose(1, 2);  // [B, HW, C]
    auto project = [&](const std::string& name) {
      return at::linear(tokens, parameters[name + ".weight"], parameters[name + ".bias"]);
    };
    at::Tensor scores = at::matmul(project("to_q"), project("to_k").transpose(1, 2)) / 2.0;
    at::Tensor mixed = at::matmul(at::softmax(scores, -1), project("to_v"));
    at::Tensor out = at::linear(mixed, parameters["to_out.0.weight"], parameters["to_out.0.bias"]);
    return input + out.transpose(1, 2).reshape({batch, channels, input.size(2), input.size(3)});
  };
  c10::InferenceMode inference;
  // 8x8: one chunk, batch of two. 77x77 = 5929 tokens: the 32M-element score budget splits the
  // queries into two chunks.
  for (auto shape : {std::vector<int64_t>{2, 4, 8, 8}, std::vector<int64_t>{1, 4, 77, 77}}) {
    at::Tensor input = at::randn(shape);
    INFO("input " << input.sizes());
    REQUIRE(max_abs_difference(attention.forward(input), reference(input)) < 1e-4);
  }
}

TEST_CASE("VAE upsampler is nearest x2 in both memory formats", "[vae]") {
  flashps::vae::Upsample2D upsampler(3);
  {
    // An identity 3x3 conv (centre tap 1) exposes the bare nearest-neighbour upsampling.
    at::NoGradGuard no_grad;
    const auto parameters = upsampler.named_parameters();
    parameters["conv.weight"].zero_();
    for (int64_t channel = 0; channel < 3; ++channel)
      parameters["conv.weight"][channel][channel][1][1] = 1.0;
    parameters["conv.bias"].zero_();
  }
  c10::InferenceMode inference;
  at::Tensor input = at::randn({2, 3, 5, 7});
  at::Tensor expected = input.repeat_interleave(2, 2).repeat_interleave(2, 3);
  // Tolerance, not equality: a Winograd convolution kernel may round the identity conv.
  REQUIRE(at::allclose(upsampler.forward(input), expected, 1e-5, 1e-6));
  REQUIRE(at::allclose(upsampler.forward(input.contiguous(at::MemoryFormat::ChannelsLast)),
                       expected, 1e-5, 1e-6));
}
