// Weights are checked at load: Inf/NaN, and BF16 bytes labelled F16, are refused naming the file
// and the tensor (they would otherwise give a black or wrong fill with exit 0).
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/diagnostics/error.h"
#include "core/files/safetensors.h"
#include "core/files/tensor_io.h"
#include "models/flux/flux_transformer.h"
#include "models/random/random_weights.h"
#include "models/vae/patch_autoencoder.h"
#include "support/temp_dir.h"
#include "support/tiny_flux.h"

using namespace flashps;

namespace {

const char* const kLargeMatrix = "transformer_blocks.0.ff.net.0.proj.weight";  // [64, 16]: 1024 values

// A tiny Flux folder whose tensors are stored as `store(name, value)` chooses (dtype and bytes).
std::string write_model(const test::TempDir& dir,
                        const std::function<void(SafetensorsWriter&, const std::string&, at::Tensor)>& store) {
  const FluxConfig config = test::tiny_flux_config(8, 8, 1, 1);
  FluxTransformer model(config);
  fill_random_weights(*model, 3);
  SafetensorsWriter writer;
  for (const auto& item : model->named_parameters(true)) store(writer, item.key(), item.value().detach().clone());
  std::filesystem::create_directories(dir.path() / "flux");
  writer.write(dir.file("flux/diffusion_pytorch_model.safetensors"));
  std::ofstream(dir.file("flux/config.json")) << config.to_json().dump();
  return dir.file("flux");
}

void add(SafetensorsWriter& writer, const std::string& name, const at::Tensor& value, DType label) {
  const at::Tensor contiguous = value.contiguous();
  writer.add(name, label, contiguous.sizes().vec(), contiguous.data_ptr(), contiguous.nbytes());
}

std::string load_error(const std::string& folder) {
  try {
    load_flux_transformer(folder, at::kFloat);
  } catch (const CorruptDataError& error) {
    return error.what();
  }
  FAIL("loading should have failed with CorruptDataError");
  return "";
}

}  // namespace

TEST_CASE("weights holding NaN or Inf are refused at load, naming the file and the tensor", "[models][weights]") {
  test::TempDir dir;
  const std::string nan_model =
      write_model(dir, [](SafetensorsWriter& writer, const std::string& name, at::Tensor value) {
        if (name == "x_embedder.weight") value.view(-1)[5] = std::numeric_limits<float>::quiet_NaN();
        add(writer, name, value, DType::F32);
      });
  CHECK(load_error(nan_model) == nan_model +
                                     "/diffusion_pytorch_model.safetensors: tensor x_embedder.weight (F32) "
                                     "holds 1 Inf/NaN value; the weights are damaged or stored with the "
                                     "wrong dtype");
  std::filesystem::remove_all(nan_model);
  const std::string inf_model =
      write_model(dir, [](SafetensorsWriter& writer, const std::string& name, at::Tensor value) {
        if (name == "proj_out.bias") value.fill_(std::numeric_limits<float>::infinity());
        add(writer, name, value.to(at::kHalf), DType::F16);
      });
  CHECK(load_error(inf_model) == inf_model +
                                     "/diffusion_pytorch_model.safetensors: tensor proj_out.bias (F16) holds "
                                     "8 Inf/NaN values; the weights are damaged or stored with the wrong "
                                     "dtype");
}

TEST_CASE("BF16 bytes labelled F16 are refused; genuine F16 and BF16 weights load", "[models][weights]") {
  test::TempDir dir;
  const std::string mislabelled =
      write_model(dir, [](SafetensorsWriter& writer, const std::string& name, at::Tensor value) {
        add(writer, name, value.to(at::kBFloat16), DType::F16);  // BF16 bytes, F16 label
      });
  const std::string message = load_error(mislabelled);
  CHECK_THAT(message, Catch::StartsWith(mislabelled + "/diffusion_pytorch_model.safetensors: tensor "));
  CHECK_THAT(message, Catch::Contains("is labelled F16 but looks like BF16 bytes") &&
                          Catch::Contains("re-export it with its real dtype"));
  std::filesystem::remove_all(mislabelled);

  // Only the large matrix mislabelled: it is the tensor named.
  const std::string one = write_model(dir, [](SafetensorsWriter& writer, const std::string& name, at::Tensor value) {
    if (name == kLargeMatrix)
      add(writer, name, value.to(at::kBFloat16), DType::F16);
    else
      add(writer, name, value, DType::F32);
  });
  CHECK_THAT(load_error(one), Catch::Contains(std::string("tensor ") + kLargeMatrix + " is labelled F16"));
  std::filesystem::remove_all(one);

  for (const auto& stored : {std::pair{at::kHalf, DType::F16}, std::pair{at::kBFloat16, DType::BF16}}) {
    const std::string genuine =
        write_model(dir, [&](SafetensorsWriter& writer, const std::string& name, at::Tensor value) {
          add(writer, name, value.to(stored.first), stored.second);
        });
    CHECK_NOTHROW(load_flux_transformer(genuine, at::kFloat));
    std::filesystem::remove_all(genuine);
  }
}

TEST_CASE("a patch autoencoder projection holding NaN is refused at load", "[models][weights]") {
  test::TempDir dir;
  std::filesystem::create_directories(dir.path() / "vae");
  std::ofstream(dir.file("vae/config.json")) << nlohmann::json{
      {"_class_name", "FlashPSPatchAutoencoder"},
      {"patch_size", 4},
      {"in_channels", 3},
      {"latent_channels", 16},
      {"scaling_factor", 1.0}}.dump();
  at::Tensor projection = at::randn({16, 48});
  projection[2][3] = std::numeric_limits<float>::quiet_NaN();
  const std::string weights = dir.file("vae/diffusion_pytorch_model.safetensors");
  save_safetensors(weights, {{"projection", projection}, {"mean", at::zeros({48})}});
  CHECK_THROWS_WITH(load_patch_autoencoder(dir.file("vae")),
                    weights +
                        ": tensor projection holds 1 Inf/NaN value; the weights are damaged or stored with "
                        "the wrong dtype");
  save_safetensors(weights, {{"projection", at::randn({16, 48})}, {"mean", at::zeros({48})}});
  CHECK_NOTHROW(load_patch_autoencoder(dir.file("vae")));
}
