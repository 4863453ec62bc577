// Flux transformers from the files users keep: Black Forest Labs' single file (float32 and
// float8) and GGUF (F16 and quantized), against the golden fixtures made with diffusers'
// conversion and llama.cpp's gguf-py; the layout table against the fixture's key_map.json.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "core/diagnostics/error.h"
#include "dev/fixture_runners.h"
#include "models/flux/flux_bfl_layout.h"
#include "models/flux/flux_transformer.h"
#include "models/loading/checkpoint_file.h"
#include "support/fixture_report_checks.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"

using namespace flashps;

namespace {

KeyPiece expected_piece(const std::string& stored_key, const std::string& transform) {
  static const std::regex rows(R"(rows \[(\d+), (\d+)\))");
  std::smatch match;
  if (transform == "identity") return {stored_key};
  if (transform == "swap_halves") return {stored_key, KeyPiece::Transform::swap_halves};
  if (std::regex_match(transform, match, rows))
    return {stored_key, KeyPiece::Transform::rows, std::stoll(match[1]), std::stoll(match[2])};
  FAIL("key_map.json has a transform this test does not know: " << transform);
  return {};
}

}  // namespace

TEST_CASE("BFL Flux layout maps every key as diffusers' conversion does", "[flux][checkpoints][fixture]") {
  FLASHPS_REQUIRE_FIXTURE(dir, "single_file_flux_fill_tiny");
  std::ifstream stream(dir / "key_map.json");
  const nlohmann::json key_map = nlohmann::json::parse(stream);
  const auto stored = open_checkpoint_file((dir / "flux_fill_tiny_bfl.safetensors").string());
  REQUIRE(has_flux_bfl_keys(*stored));
  const KeyLayout layout = flux_bfl_layout(*stored);
  size_t targets = 0;
  for (const auto& [stored_key, pieces] : key_map.items()) {
    for (const auto& piece : pieces) {
      const std::string key = piece.at("diffusers");
      INFO(stored_key << " -> " << key);
      ++targets;
      const auto found = layout.find(key);
      REQUIRE(found != layout.end());
      const KeyPiece expected = expected_piece(stored_key, piece.at("transform"));
      CHECK(found->second.stored_key == expected.stored_key);
      CHECK(found->second.transform == expected.transform);
      CHECK(found->second.row_begin == expected.row_begin);
      CHECK(found->second.row_end == expected.row_end);
    }
  }
  CHECK(layout.size() == targets);  // nothing mapped that diffusers does not map
}

TEST_CASE("a BFL single file loads bit-identical to its diffusers folder", "[flux][checkpoints][fixture]") {
  FLASHPS_REQUIRE_FIXTURE(single, "single_file_flux_fill_tiny");
  FLASHPS_REQUIRE_FIXTURE(folder, "flux_fill_tiny");
  const FluxTransformer from_folder = load_flux_transformer(folder.string(), at::kFloat);
  const auto tensors = flux_transformer_tensors(open_checkpoint_file((single / "flux_fill_tiny_bfl.safetensors").string()));
  const FluxTransformer from_file =
      load_flux_transformer(*tensors, from_folder->config(), "flux_fill_tiny config", at::kFloat);
  const auto expected = from_folder->named_parameters();
  const auto actual = from_file->named_parameters();
  REQUIRE(actual.size() == expected.size());
  for (const auto& item : expected) {
    INFO(item.key());
    REQUIRE(actual.contains(item.key()));
    CHECK(at::equal(actual[item.key()], item.value()));
  }
}

TEST_CASE("Flux single-file fixtures (float32, float8) match diffusers", "[flux][checkpoints][fixture]") {
  FLASHPS_REQUIRE_FIXTURE(dir, "single_file_flux_fill_tiny");
  test::require_all_cases_pass(dev::run_fixture(dir.string()));
}

TEST_CASE("Flux GGUF fixtures (F16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1) match diffusers on their weights",
          "[flux][checkpoints][fixture]") {
  FLASHPS_REQUIRE_FIXTURE(dir, "gguf_flux_fill_tiny");
  test::require_all_cases_pass(dev::run_fixture(dir.string()));
}

TEST_CASE("checkpoint files that cannot be loaded say why", "[checkpoints]") {
  test::TempDir temp;
  for (const char* name : {"model.ckpt", "model.pt", "pytorch_model.bin"}) {
    const std::string path = temp.file(name);
    std::ofstream(path) << "not read";
    CHECK_THROWS_WITH(open_checkpoint_file(path), Catch::Contains(path) && Catch::Contains("runs code"));
  }
  const std::string fake = temp.file("flux.gguf");
  std::ofstream(fake) << "GGUX and more";
  CHECK_THROWS_WITH(open_checkpoint_file(fake), Catch::Contains(fake) && Catch::Contains("GGUF"));
  CHECK_THROWS_AS(open_checkpoint_file(temp.file("absent.safetensors")), NotFoundError);
}
