// Single-file Stable Diffusion checkpoints (original LDM / SGM keys, OpenCLIP text towers) load
// as diffusers folders do: the fixtures' golden cases pass through the components loaded from the
// one file, the parameters equal those of the same model's diffusers folder bit for bit, and a
// damaged file is refused naming the file and the tensor.
#include <ATen/ATen.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <functional>
#include <nlohmann/json.hpp>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "core/files/tensor_io.h"
#include "dev/fixture_runners.h"
#include "models/loading/checkpoint_file.h"
#include "models/loading/checkpoint_prefix.h"
#include "support/fixture_kinds.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"

using namespace flashps;

namespace {

// A component of a single-file fixture loaded from `file` under its prefix, as a module.
std::shared_ptr<torch::nn::Module> load_from_file(std::shared_ptr<const CheckpointTensors> file,
                                                  const nlohmann::json& component, const std::string& config_path) {
  const nlohmann::json config = read_json_file(config_path);
  auto stored = tensors_under_prefix(std::move(file), component.value("prefix", ""));
  const std::string class_name = component.at("_class_name");
  if (class_name == "UNet2DConditionModel") {
    const UNetConfig parsed = parse_unet_config(config, config_path);
    return load_unet(*unet_tensors(std::move(stored), parsed), parsed, config_path, at::kFloat).ptr();
  }
  if (class_name == "AutoencoderKL") {
    const AutoencoderKLConfig parsed = parse_autoencoder_kl_config(config, config_path);
    return load_autoencoder_kl(*autoencoder_tensors(std::move(stored), parsed), parsed, config_path, at::kFloat);
  }
  if (class_name == "CLIPTextModel" || class_name == "CLIPTextModelWithProjection") {
    const ClipTextConfig parsed = parse_clip_text_config(config, config_path);
    return load_clip_text_model(*clip_text_tensors(std::move(stored), parsed), parsed, config_path, at::kFloat).ptr();
  }
  if (class_name == "FluxTransformer2DModel") {
    const FluxConfig parsed = FluxConfig::from_json(config, config_path);
    return load_flux_transformer(*flux_transformer_tensors(std::move(stored)), parsed, config_path, at::kFloat).ptr();
  }
  FAIL("no loader for component class " << class_name);
  return nullptr;
}

// The same component from its diffusers folder.
std::shared_ptr<torch::nn::Module> load_from_folder(const std::string& class_name, const std::string& dir) {
  if (class_name == "UNet2DConditionModel") return load_unet(dir).ptr();
  if (class_name == "AutoencoderKL") return load_autoencoder_kl(dir);
  if (class_name == "CLIPTextModel" || class_name == "CLIPTextModelWithProjection") return load_clip_text_model(dir).ptr();
  if (class_name == "FluxTransformer2DModel") return load_flux_transformer(dir, at::kFloat).ptr();
  FAIL("no loader for component class " << class_name);
  return nullptr;
}

}  // namespace

TEST_CASE("single-file fixtures pass every case through their components", "[checkpoints][sd][fixture]") {
  const auto fixtures = test::fixture_dirs_of_kind("single_file");
  if (fixtures.empty()) {
    WARN("SKIPPED: no single_file fixtures (set FLASHPS_FIXTURES_DIR or place ../shared/fixtures beside the repository)");
    return;
  }
  for (const auto& dir : fixtures) {
    const dev::FixtureReport report = dev::run_fixture(dir.string());
    INFO(dir.filename().string());
    REQUIRE(report.skipped.empty());
    REQUIRE(!report.cases.empty());
    for (const auto& result : report.cases) {
      INFO("case " << result.name << (result.error.empty() ? "" : ": " + result.error));
      REQUIRE(result.error.empty());
      for (const auto& output : result.outputs) {
        INFO("output " << output.output << " max abs error " << output.max_abs_error);
        CHECK(output.passed);
      }
    }
  }
}

TEST_CASE("a single file's components load bit-identical to their diffusers folders", "[checkpoints][sd][fixture]") {
  size_t compared = 0;
  for (const auto& dir : test::fixture_dirs_of_kind("single_file")) {
    const nlohmann::json index = read_json_file((dir / "cases.json").string());
    if (!index.contains("checkpoint")) continue;  // per-case files (Flux): test_flux_checkpoints.cpp
    std::shared_ptr<const CheckpointTensors> file =
        open_checkpoint_file((dir / index.at("checkpoint").get<std::string>()).string());
    for (const auto& [name, component] : index.at("components").items()) {
      // Components whose folder fixture holds the same weights ("clip_text_tiny_gelu (+ text_projection)" does not).
      const auto folder = test::fixture_dir(component.value("same_as_fixture", ""));
      if (!folder) continue;
      INFO(dir.filename().string() << " component " << name << " vs " << folder->filename().string());
      const auto from_file = load_from_file(file, component, (dir / component.at("config").get<std::string>()).string());
      const auto from_folder = load_from_folder(component.at("_class_name"), folder->string());
      const auto expected = from_folder->named_parameters();
      const auto actual = from_file->named_parameters();
      REQUIRE(actual.size() == expected.size());
      for (const auto& item : expected) {
        INFO(item.key());
        REQUIRE(actual.contains(item.key()));
        CHECK(at::equal(actual[item.key()], item.value()));
      }
      ++compared;
    }
  }
  if (compared == 0) WARN("SKIPPED: no single-file fixture with its diffusers folder fixtures");
}

TEST_CASE("a single file missing a tensor or holding a wrong shape is refused naming the file and the key",
          "[checkpoints][sd][fixture]") {
  FLASHPS_REQUIRE_FIXTURE(dir, "single_file_sd_inpaint_tiny");
  const nlohmann::json index = read_json_file((dir / "cases.json").string());
  const nlohmann::json& unet = index.at("components").at("unet");
  const std::string config_path = (dir / unet.at("config").get<std::string>()).string();
  const auto tensors = load_safetensors((dir / index.at("checkpoint").get<std::string>()).string());
  const std::string prefix = unet.at("prefix");
  test::TempDir temp;
  // Rewrites the checkpoint with `change` applied to the tensor list.
  auto rewritten = [&](const std::string& name, const std::function<void(std::vector<std::pair<std::string, at::Tensor>>&)>& change) {
    std::vector<std::pair<std::string, at::Tensor>> list(tensors.begin(), tensors.end());
    change(list);
    const std::string path = temp.file(name);
    save_safetensors(path, list);
    return path;
  };
  SECTION("missing") {
    const std::string gone = prefix + "input_blocks.1.0.in_layers.2.weight";
    const std::string path = rewritten("missing.safetensors", [&](auto& list) {
      list.erase(std::remove_if(list.begin(), list.end(), [&](const auto& item) { return item.first == gone; }), list.end());
    });
    CHECK_THROWS_WITH(load_from_file(open_checkpoint_file(path), unet, config_path),
                      Catch::Contains(path) && Catch::Contains("down_blocks.0.resnets.0.conv1.weight") &&
                          Catch::Contains("missing"));
  }
  SECTION("wrong shape, a tensor the config implies") {
    const std::string bad = prefix + "input_blocks.0.0.weight";  // conv_in: in_channels x block_out_channels[0]
    const std::string path = rewritten("conv_in.safetensors", [&](auto& list) {
      for (auto& item : list)
        if (item.first == bad) item.second = at::zeros({item.second.size(0), 3, 3, 3});
    });
    CHECK_THROWS_WITH(load_from_file(open_checkpoint_file(path), unet, config_path),
                      Catch::Contains(path) && Catch::Contains(bad));
  }
  SECTION("wrong shape, any other tensor") {
    const std::string bad = prefix + "out.0.bias";  // conv_norm_out.bias
    const std::string path = rewritten("norm_out.safetensors", [&](auto& list) {
      for (auto& item : list)
        if (item.first == bad) item.second = at::zeros({item.second.size(0) + 1});
    });
    CHECK_THROWS_WITH(load_from_file(open_checkpoint_file(path), unet, config_path),
                      Catch::Contains(path) && Catch::Contains("conv_norm_out.bias"));
  }
}
