// Flux transformers with their quantized (GGUF) and float8 (single file) Linear weights kept as
// stored: the fixtures' cases pass within their tolerances, and the loaded model holds those
// weights once, as the file stores them (no dense float copy).
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "core/files/json_file.h"
#include "core/quant/quantized_matrix.h"
#include "dev/fixture_runners.h"
#include "models/common/layers.h"
#include "models/flux/flux_transformer.h"
#include "models/loading/checkpoint_file.h"
#include "support/fixture_report_checks.h"
#include "support/fixtures.h"

using namespace flashps;
namespace fs = std::filesystem;

namespace {

FluxTransformer load_kept_quantized(const dev::FixtureSet& set, const std::string& weights_file,
                                    const std::string& component) {
  const nlohmann::json& entry = set.components.at(component);
  const std::string config_path = (fs::path(set.dir) / entry.at("config").get<std::string>()).string();
  const FluxConfig config = FluxConfig::from_json(read_json_file(config_path), config_path);
  auto tensors = flux_transformer_tensors(open_checkpoint_file((fs::path(set.dir) / weights_file).string()));
  return load_flux_transformer(*tensors, config, config_path, at::kFloat, /*keep_quantized=*/true);
}

// Bytes of the file's tensors that can be kept as stored.
int64_t stored_quantized_bytes(const std::string& path) {
  const auto tensors = open_checkpoint_file(path);
  int64_t bytes = 0;
  for (const auto& [key, entry] : tensors->entries())
    if (entry.quantized) bytes += tensors->read_quantized(key)->stored_bytes();
  return bytes;
}

// Every case of a checkpoint fixture, each weights file loaded once with keep_quantized; returns
// how many of the loaded models' Linear layers kept quantized weights.
int64_t require_cases_pass_kept_quantized(const fs::path& dir) {
  const dev::FixtureSet set = dev::load_fixture_set(dir.string());
  std::map<std::string, FluxTransformer> models;
  int64_t quantized_layers = 0;
  const dev::FixtureReport report = dev::run_each_case(set, "forward", [&](const dev::FixtureCase& fixture_case) {
    auto loaded = models.find(fixture_case.weights);
    if (loaded == models.end()) {
      loaded = models.emplace(fixture_case.weights, load_kept_quantized(set, fixture_case.weights, fixture_case.component))
                   .first;
      quantized_layers += weight_footprint(*loaded->second).quantized_matrices;
    }
    at::NoGradGuard no_grad;
    FluxTransformer& model = loaded->second;
    return std::map<std::string, at::Tensor>{
        {"sample", model->forward_batched(set.input_tensor(fixture_case, "hidden_states"),
                                          set.input_tensor(fixture_case, "encoder_hidden_states"),
                                          set.input_tensor(fixture_case, "pooled_projections"),
                                          set.input_tensor(fixture_case, "timestep"),
                                          set.input_tensor(fixture_case, "img_ids"),
                                          set.input_tensor(fixture_case, "txt_ids"),
                                          set.input_tensor(fixture_case, "guidance"))}};
  });
  test::require_all_cases_pass(report);
  return quantized_layers;
}

// The files of `dir` with `extension` holding tensors that can be kept as stored.
std::vector<fs::path> quantized_files(const fs::path& dir, const std::string& extension) {
  std::vector<fs::path> files;
  for (const auto& item : fs::directory_iterator(dir))
    if (item.path().extension() == extension && stored_quantized_bytes(item.path().string()) > 0)
      files.push_back(item.path());
  return files;
}

}  // namespace

TEST_CASE("Flux GGUF fixtures pass with quantized weights kept as stored", "[flux][checkpoints][quant][fixture]") {
  FLASHPS_REQUIRE_FIXTURE(dir, "gguf_flux_fill_tiny");
  REQUIRE(!quantized_files(dir, ".gguf").empty());
  CHECK(require_cases_pass_kept_quantized(dir) > 0);
}

TEST_CASE("Flux float8 single-file fixtures pass with fp8 weights kept as stored", "[flux][checkpoints][quant][fixture]") {
  FLASHPS_REQUIRE_FIXTURE(dir, "single_file_flux_fill_tiny");
  REQUIRE(!quantized_files(dir, ".safetensors").empty());
  CHECK(require_cases_pass_kept_quantized(dir) > 0);
}

TEST_CASE("a Flux model loaded keep_quantized holds no dense copy of its quantized weights",
          "[flux][checkpoints][quant][fixture]") {
  for (const char* fixture : {"gguf_flux_fill_tiny", "single_file_flux_fill_tiny"}) {
    FLASHPS_REQUIRE_FIXTURE(dir, fixture);
    const dev::FixtureSet set = dev::load_fixture_set(dir.string());
    for (const std::string extension : {".gguf", ".safetensors"}) {
      for (const fs::path& file : quantized_files(dir, extension)) {
        INFO(file);
        const std::string component = set.components.begin().key();
        const FluxTransformer model = load_kept_quantized(set, file.filename().string(), component);
        const WeightFootprint footprint = weight_footprint(*model);
        // Each quantized tensor is held once, as stored (row ranges of a qkv tensor add up to it) ...
        CHECK(footprint.quantized_bytes == stored_quantized_bytes(file.string()));
        CHECK(footprint.quantized_bytes <= int64_t(fs::file_size(file)));
        // ... and the dense parameters are exactly the other values, in float32.
        CHECK(footprint.dense_bytes == 4 * (footprint.values - footprint.quantized_values));
        for (const auto& item : model->named_parameters()) {
          INFO(item.key());
          CHECK(item.value().numel() > 0);  // no emptied placeholder left behind as a parameter
        }
      }
    }
  }
}

TEST_CASE("a bfloat16 Flux model with its weights kept quantized runs as the same weights decoded to bfloat16",
          "[flux][checkpoints][quant][fixture]") {
  FLASHPS_REQUIRE_FIXTURE(dir, "gguf_flux_fill_tiny");
  const dev::FixtureSet set = dev::load_fixture_set(dir.string());
  const std::vector<fs::path> files = quantized_files(dir, ".gguf");
  REQUIRE(!files.empty());
  const nlohmann::json& entry = set.components.begin().value();
  const std::string config_path = (dir / entry.at("config").get<std::string>()).string();
  const FluxConfig config = FluxConfig::from_json(read_json_file(config_path), config_path);
  const dev::FixtureCase& fixture_case = set.cases.front();
  for (const fs::path& file : files) {
    INFO(file);
    auto load = [&](bool keep_quantized) {
      auto tensors = flux_transformer_tensors(open_checkpoint_file(file.string()));
      return load_flux_transformer(*tensors, config, config_path, at::kBFloat16, keep_quantized);
    };
    const FluxTransformer decoded = load(false), kept = load(true);
    REQUIRE(weight_footprint(*kept).quantized_matrices > 0);
    CHECK(kept->dtype() == at::kBFloat16);
    at::NoGradGuard no_grad;
    auto run = [&](const FluxTransformer& model) {
      return model->forward_batched(set.input_tensor(fixture_case, "hidden_states"),
                                    set.input_tensor(fixture_case, "encoder_hidden_states"),
                                    set.input_tensor(fixture_case, "pooled_projections"),
                                    set.input_tensor(fixture_case, "timestep"), set.input_tensor(fixture_case, "img_ids"),
                                    set.input_tensor(fixture_case, "txt_ids"), set.input_tensor(fixture_case, "guidance"));
    };
    const at::Tensor expected = run(decoded), actual = run(kept);
    REQUIRE(actual.sizes() == expected.sizes());
    // The same bfloat16 weights (both round the decoded float32 values to nearest even) and
    // products; only the order of the products' sums may differ.
    const double scale = expected.abs().max().item<double>();
    const double error = (actual.to(at::kDouble) - expected.to(at::kDouble)).abs().max().item<double>();
    INFO("max abs error " << error << ", largest value " << scale);
    CHECK(error <= 1e-3 * scale);
  }
}
