// Writing a model in another key layout (layout_writer.h): flux_fill_tiny's diffusers tensors
// written in Black Forest Labs' layout reproduce single_file_flux_fill_tiny's file tensor for
// tensor, bit for bit, and read back through the loader's layout table as the same model; the
// layout built for writing (random_layouts.h) names the fixture's keys and shapes; layouts that
// cannot be inverted are refused by name.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "core/files/safetensors.h"
#include "core/files/tensor_io.h"
#include "models/flux/flux_bfl_layout.h"
#include "models/flux/flux_transformer.h"
#include "models/loading/checkpoint_tensors.h"
#include "models/loading/layout_writer.h"
#include "models/random/random_layouts.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"

using namespace flashps;

namespace {

std::unique_ptr<CheckpointTensors> open_safetensors(const std::string& path) {
  return safetensors_tensors({SafetensorsFile::open(path)});
}

std::map<std::string, at::Tensor> read_all(const CheckpointTensors& tensors) {
  std::map<std::string, at::Tensor> all;
  for (const auto& [key, entry] : tensors.entries()) all[key] = tensors.read(key).to(at::kFloat).clone();
  return all;
}

}  // namespace

TEST_CASE("flux_fill_tiny written in BFL's layout is the single-file fixture, bit for bit", "[layout_writer][fixtures]") {
  FLASHPS_REQUIRE_FIXTURE(model_dir, "flux_fill_tiny");
  FLASHPS_REQUIRE_FIXTURE(single_dir, "single_file_flux_fill_tiny");
  const auto model = read_all(*open_safetensors((model_dir / "diffusion_pytorch_model.safetensors").string()));
  const auto bfl_file = open_safetensors((single_dir / "flux_fill_tiny_bfl.safetensors").string());
  const auto bfl = read_all(*bfl_file);

  // The layout as the loader reads the fixture file, inverted.
  const auto written = stored_tensors_from_layout(flux_bfl_layout(*bfl_file), model, "BFL");
  REQUIRE(written.size() == bfl.size());
  for (const auto& [key, tensor] : bfl) {
    INFO(key);
    REQUIRE(written.count(key));
    CHECK(written.at(key).sizes() == tensor.sizes());
    CHECK(at::equal(written.at(key), tensor));
  }

  // The layout built from the config and the model's shapes alone: the same stored keys and shapes.
  const FluxConfig config = FluxConfig::from_json(read_json_file((model_dir / "config.json").string()), "config.json");
  TensorShapes shapes;
  for (const auto& [key, tensor] : model) shapes[key] = tensor.sizes().vec();
  const auto recipes = stored_tensor_recipes(flux_bfl_layout_for_writing(config, shapes), shapes, "BFL");
  REQUIRE(recipes.size() == bfl.size());
  for (const StoredTensorRecipe& recipe : recipes) {
    INFO(recipe.stored_key);
    REQUIRE(bfl.count(recipe.stored_key));
    CHECK(recipe.stored_shape == bfl.at(recipe.stored_key).sizes().vec());
  }

  // Round trip: the written file read through the loader's layout gives the model back.
  test::TempDir temp;
  std::vector<std::pair<std::string, at::Tensor>> to_save(written.begin(), written.end());
  save_safetensors(temp.file("bfl.safetensors"), to_save);
  const auto read_back = flux_transformer_tensors(open_safetensors(temp.file("bfl.safetensors")));
  REQUIRE(read_back->entries().size() == model.size());
  for (const auto& [key, tensor] : model) {
    INFO(key);
    CHECK(at::equal(read_back->read(key), tensor));
  }
}

TEST_CASE("layouts that cannot be written are refused by name", "[layout_writer]") {
  const TensorShapes shapes = {{"a.weight", {4, 3}}, {"b.weight", {2, 3}}, {"c.weight", {6, 3}}};
  KeyLayout layout = {{"a.weight", {"ab.weight", KeyPiece::Transform::rows, 0, 4}},
                      {"b.weight", {"ab.weight", KeyPiece::Transform::rows, 5, 7}},
                      {"c.weight", {"c.weight"}}};
  CHECK_THROWS_WITH(stored_tensor_recipes(layout, shapes, "Test"),
                    Catch::Contains("Test layout, ab.weight: rows [4, 5) hold no model tensor"));
  layout["b.weight"].row_begin = 4, layout["b.weight"].row_end = 6;
  CHECK(stored_tensor_recipes(layout, shapes, "Test").front().stored_shape == std::vector<int64_t>{6, 3});
  layout.erase("c.weight");
  CHECK_THROWS_WITH(stored_tensor_recipes(layout, shapes, "Test"),
                    Catch::Contains("the model's c.weight [6, 3] has no place in it"));
  layout["c.weight"] = {"c.weight", KeyPiece::Transform::squeeze_1x1};
  const auto recipes = stored_tensor_recipes(layout, shapes, "Test");
  CHECK(recipes.back().stored_shape == std::vector<int64_t>{6, 3, 1, 1});
  layout["b.weight"] = {"c.weight"};
  CHECK_THROWS_WITH(stored_tensor_recipes(layout, shapes, "Test"), Catch::Contains("stored whole for both"));
}

TEST_CASE("vae_sd_tiny written in the LDM layout is the SD single-file fixture's VAE, bit for bit", "[layout_writer][fixtures]") {
  FLASHPS_REQUIRE_FIXTURE(vae_dir, "vae_sd_tiny");
  FLASHPS_REQUIRE_FIXTURE(single_dir, "single_file_sd_inpaint_tiny");
  const auto model = read_all(*open_safetensors((vae_dir / "diffusion_pytorch_model.safetensors").string()));
  const auto single = read_all(*open_safetensors((single_dir / "sd_inpaint_tiny.safetensors").string()));
  const nlohmann::json config = read_json_file((vae_dir / "config.json").string());
  TensorShapes shapes;
  for (const auto& [key, tensor] : model) shapes[key] = tensor.sizes().vec();
  // diffusers' convert_diffusers_to_original_stable_diffusion wrote the fixture; this is the inverse of its reader.
  const auto written = stored_tensors_from_layout(
      autoencoder_ldm_layout_for_writing(shapes, int64_t(config.at("block_out_channels").size())), model, "LDM VAE");
  size_t vae_keys = 0;
  for (const auto& [key, tensor] : single) {
    if (key.rfind("first_stage_model.", 0) != 0) continue;
    ++vae_keys;
    const std::string stored = key.substr(18);
    INFO(stored);
    REQUIRE(written.count(stored));
    CHECK(written.at(stored).sizes() == tensor.sizes());
    CHECK(at::equal(written.at(stored), tensor));
  }
  CHECK(vae_keys == written.size());
}

TEST_CASE("SD UNets written in the LDM layout are the single-file fixtures' UNets, bit for bit", "[layout_writer][fixtures]") {
  for (const auto& [unet_fixture, single_fixture, file] :
       {std::tuple<const char*, const char*, const char*>{"unet_sd_inpaint_tiny", "single_file_sd_inpaint_tiny", "sd_inpaint_tiny.safetensors"},
        {"unet_sdxl_tiny", "single_file_sdxl_tiny", "sdxl_tiny.safetensors"}}) {
    FLASHPS_REQUIRE_FIXTURE(unet_dir, unet_fixture);
    FLASHPS_REQUIRE_FIXTURE(single_dir, single_fixture);
    const auto model = read_all(*open_safetensors((unet_dir / "diffusion_pytorch_model.safetensors").string()));
    const auto single = read_all(*open_safetensors((single_dir / file).string()));
    TensorShapes shapes;
    for (const auto& [key, tensor] : model) shapes[key] = tensor.sizes().vec();
    const auto written = stored_tensors_from_layout(unet_ldm_layout_for_writing(shapes), model, "LDM UNet");
    size_t unet_keys = 0;
    for (const auto& [key, tensor] : single) {
      if (key.rfind("model.diffusion_model.", 0) != 0) continue;
      ++unet_keys;
      const std::string stored = key.substr(22);
      INFO(single_fixture << ": " << stored);
      REQUIRE(written.count(stored));
      CHECK(at::equal(written.at(stored), tensor));
    }
    CHECK(unet_keys == written.size());
  }
}

TEST_CASE("CLIP written in OpenCLIP's layout is the SDXL single file's second text encoder, bit for bit", "[layout_writer][fixtures]") {
  FLASHPS_REQUIRE_FIXTURE(clip_dir, "clip_text_tiny_gelu");
  FLASHPS_REQUIRE_FIXTURE(single_dir, "single_file_sdxl_tiny");
  auto model = read_all(*open_safetensors((clip_dir / "model.safetensors").string()));
  const auto single = read_all(*open_safetensors((single_dir / "sdxl_tiny.safetensors").string()));
  const std::string prefix = "conditioner.embedders.1.model.";
  // The fixture's random projection exists only in the single file, stored [hidden, projection].
  model["text_projection.weight"] = single.at(prefix + "text_projection").t().contiguous();
  model.erase("text_model.embeddings.position_ids");
  TensorShapes shapes;
  for (const auto& [key, tensor] : model) shapes[key] = tensor.sizes().vec();
  const auto written = stored_tensors_from_layout(open_clip_layout_for_writing(shapes), model, "OpenCLIP");
  size_t keys = 0;
  for (const auto& [key, tensor] : single) {
    if (key.rfind(prefix, 0) != 0) continue;
    ++keys;
    const std::string stored = key.substr(prefix.size());
    INFO(stored);
    REQUIRE(written.count(stored));
    CHECK(written.at(stored).sizes() == tensor.sizes());
    CHECK(at::equal(written.at(stored), tensor));
  }
  CHECK(keys == written.size());
}
