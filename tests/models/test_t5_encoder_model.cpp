// T5EncoderModel (Flux's text_encoder_2) against transformers (../shared/fixtures/t5_encoder_tiny),
// and the folders real checkpoints ship: shards with an index, the tied embedding under either
// name, bfloat16; bad folders give named errors.
#include <ATen/ATen.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "core/files/tensor_io.h"
#include "dev/fixture_set.h"
#include "models/t5/t5_encoder_model.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"

using namespace flashps;
namespace fs = std::filesystem;

namespace {

at::Tensor run_case(const T5EncoderModel& model, const dev::FixtureSet& fixtures, const dev::FixtureCase& fixture) {
  const at::Tensor mask = fixture.inputs.contains("attention_mask") ? fixtures.input_tensor(fixture, "attention_mask")
                                                                   : at::Tensor();
  return model->forward(fixtures.input_tensor(fixture, "input_ids"), mask);
}

// A tiny random T5 v1.1 folder (config.json + weights in `shards` files with an index when > 1).
nlohmann::json tiny_config() {
  return {{"_class_name", "T5EncoderModel"}, {"d_model", 16},  {"d_kv", 4},       {"num_heads", 2},
          {"d_ff", 24},                      {"num_layers", 2}, {"vocab_size", 40}, {"feed_forward_proj", "gated-gelu"},
          {"relative_attention_num_buckets", 8}, {"relative_attention_max_distance", 20}};
}

std::vector<std::pair<std::string, at::Tensor>> random_weights(const nlohmann::json& config) {
  T5EncoderModel model(T5Config::from_json(config, "tiny"));
  at::manual_seed(7);
  std::vector<std::pair<std::string, at::Tensor>> weights;
  for (const auto& item : model->named_parameters()) weights.emplace_back(item.key(), at::randn(item.value().sizes()) * 0.3);
  return weights;
}

void write_folder(const fs::path& dir, const nlohmann::json& config,
                  const std::vector<std::pair<std::string, at::Tensor>>& weights, int shards) {
  fs::create_directories(dir);
  write_json_file((dir / "config.json").string(), config);
  if (shards == 1) {
    save_safetensors((dir / "model.safetensors").string(), weights);
    return;
  }
  nlohmann::json index = {{"metadata", {{"total_size", 0}}}, {"weight_map", nlohmann::json::object()}};
  std::vector<std::vector<std::pair<std::string, at::Tensor>>> parts(shards);
  for (size_t i = 0; i < weights.size(); ++i) {
    const int part = static_cast<int>(i % shards);
    char name[64];
    std::snprintf(name, sizeof name, "model-%05d-of-%05d.safetensors", part + 1, shards);
    parts[part].push_back(weights[i]);
    index["weight_map"][weights[i].first] = name;
  }
  for (int part = 0; part < shards; ++part) {
    char name[64];
    std::snprintf(name, sizeof name, "model-%05d-of-%05d.safetensors", part + 1, shards);
    save_safetensors((dir / name).string(), parts[part]);
  }
  write_json_file((dir / "model.safetensors.index.json").string(), index);
}

at::Tensor sample_ids() { return at::tensor({5, 9, 1, 0, 0, 33, 12, 1}, at::kLong).reshape({2, 4}); }

}  // namespace

TEST_CASE("T5EncoderModel matches transformers on every golden case", "[models][t5][fixtures]") {
  FLASHPS_REQUIRE_FIXTURE(dir, "t5_encoder_tiny");
  const T5EncoderModel model = load_t5_encoder_model(dir.string());
  const dev::FixtureSet fixtures = dev::load_fixture_set(dir.string());
  REQUIRE_FALSE(fixtures.cases.empty());
  for (const dev::FixtureCase& fixture : fixtures.cases) {
    INFO(fixture.name);
    const at::Tensor actual = run_case(model, fixtures, fixture);
    for (const auto& [name, key] : fixture.outputs) {
      REQUIRE(name == "last_hidden_state");
      const auto comparison = dev::compare_output(name, actual, fixtures.tensor(key), fixture.atol, fixture.rtol);
      INFO(name << ": max |error| " << comparison.max_abs_error << ", worst error/allowed " << comparison.worst_ratio);
      CHECK(comparison.shape_matches);
      CHECK(comparison.passed);
    }
  }
}

TEST_CASE("T5EncoderModel in bfloat16 stays close to float32", "[models][t5][fixtures]") {
  FLASHPS_REQUIRE_FIXTURE(dir, "t5_encoder_tiny");
  const T5EncoderModel full = load_t5_encoder_model(dir.string());
  const T5EncoderModel half = load_t5_encoder_model(dir.string(), at::kBFloat16);
  for (const auto& parameter : half->parameters()) CHECK(parameter.scalar_type() == at::kBFloat16);
  const dev::FixtureSet fixtures = dev::load_fixture_set(dir.string());
  for (const dev::FixtureCase& fixture : fixtures.cases) {
    INFO(fixture.name);
    const at::Tensor reference = run_case(full, fixtures, fixture), actual = run_case(half, fixtures, fixture);
    CHECK(actual.scalar_type() == at::kFloat);
    // bfloat16 keeps 8 bits of mantissa in weights and in the products' inputs; T5's unscaled
    // attention sharpens the differences: a few per cent over the fixture's 3 blocks (5.7% on
    // its 300 random ids), far below the ~140% of an unrelated output of the same scale.
    const double relative = ((actual - reference).norm() / reference.norm()).item<double>();
    CHECK(relative < 0.1);
    CHECK(relative > 0);  // the weights really are bfloat16
  }
}

TEST_CASE("T5 relative position buckets follow transformers' bidirectional rule", "[models][t5]") {
  // 32 buckets, max distance 128: 16 per direction, 8 exact, then logarithmic up to 127.
  const at::Tensor buckets = t5_relative_position_buckets(1, 300, 32, 128);
  auto bucket = [&](int64_t key) { return buckets[0][key].item<int64_t>(); };
  CHECK(bucket(0) == 0);
  CHECK(bucket(1) == 17);    // keys after the query use the upper half
  CHECK(bucket(7) == 23);    // exact up to 7
  CHECK(bucket(8) == 24);    // 8 + floor(log(8/8) / log(16) * 8)
  CHECK(bucket(127) == 31);  // 8 + floor(log(127/8) / log(16) * 8) = 15, clamped at 15
  CHECK(bucket(299) == 31);
  const at::Tensor before = t5_relative_position_buckets(300, 1, 32, 128);
  CHECK(before[7][0].item<int64_t>() == 7);    // key 7 before the query: lower half
  CHECK(before[20][0].item<int64_t>() == 10);  // 8 + floor(log(20/8) / log(16) * 8) = 8 + 2
  CHECK(before[299][0].item<int64_t>() == 15);
}

TEST_CASE("T5 folders: shards, either embedding name, attention mask", "[models][t5]") {
  test::TempDir temp;
  const nlohmann::json config = tiny_config();
  const auto weights = random_weights(config);
  write_folder(temp.path() / "single", config, weights, 1);
  write_folder(temp.path() / "sharded", config, weights, 3);
  const at::Tensor ids = sample_ids();
  const at::Tensor reference = load_t5_encoder_model((temp.path() / "single").string())->forward(ids);
  CHECK(reference.sizes() == at::IntArrayRef{2, 4, 16});
  CHECK(at::equal(load_t5_encoder_model((temp.path() / "sharded").string())->forward(ids), reference));

  SECTION("the tied embedding stored as encoder.embed_tokens.weight, alone or beside shared.weight") {
    auto renamed = weights;
    for (auto& [name, tensor] : renamed)
      if (name == "shared.weight") name = "encoder.embed_tokens.weight";
    write_folder(temp.path() / "embed_tokens", config, renamed, 1);
    CHECK(at::equal(load_t5_encoder_model((temp.path() / "embed_tokens").string())->forward(ids), reference));
    auto both = weights;
    both.emplace_back("encoder.embed_tokens.weight", weights.front().second);
    write_folder(temp.path() / "both", config, both, 2);
    CHECK(at::equal(load_t5_encoder_model((temp.path() / "both").string())->forward(ids), reference));
  }
  SECTION("an attention mask changes the unmasked rows only through the ignored keys") {
    const T5EncoderModel model = load_t5_encoder_model((temp.path() / "single").string());
    const at::Tensor mask = at::tensor({1, 1, 1, 0, 1, 1, 1, 1}, at::kLong).reshape({2, 4});
    const at::Tensor masked = model->forward(ids, mask);
    CHECK(at::allclose(masked[1], reference[1]));      // all ones: as without a mask
    CHECK_FALSE(at::allclose(masked[0], reference[0]));  // the padding key no longer attended
    // The same as encoding the first three tokens alone.
    const at::Tensor alone = model->forward(ids.narrow(0, 0, 1).narrow(1, 0, 3));
    CHECK(at::allclose(masked[0].narrow(0, 0, 3), alone[0], 1e-5, 1e-5));
  }
  SECTION("bad inputs are named") {
    const T5EncoderModel model = load_t5_encoder_model((temp.path() / "single").string());
    CHECK_THROWS_AS(model->forward(at::full({1, 3}, 40, at::kLong)), InvalidArgumentError);
    CHECK_THROWS_WITH(model->forward(at::full({1, 3}, -1, at::kLong)), Catch::Contains("vocabulary of 40"));
    CHECK_THROWS_WITH(model->forward(ids, at::ones({2, 3}, at::kLong)), Catch::Contains("attention_mask"));
    CHECK_THROWS_WITH(model->forward(at::zeros({1, T5EncoderModelImpl::kMaxSequenceLength + 1}, at::kLong)),
                      Catch::Contains("sequence length"));
  }
}

TEST_CASE("T5 folders with problems give errors naming the file and the problem", "[models][t5]") {
  test::TempDir temp;
  const nlohmann::json config = tiny_config();
  const auto weights = random_weights(config);

  CHECK_THROWS_WITH(load_t5_encoder_model(temp.file("absent")), Catch::Contains("does not exist"));
  fs::create_directories(temp.path() / "no_config");
  CHECK_THROWS_WITH(load_t5_encoder_model(temp.file("no_config")), Catch::Contains("no config.json"));

  write_folder(temp.path() / "no_weights", config, weights, 1);
  fs::remove(temp.path() / "no_weights" / "model.safetensors");
  CHECK_THROWS_WITH(load_t5_encoder_model(temp.file("no_weights")),
                    Catch::Contains("no weights") && Catch::Contains("model.safetensors"));

  write_folder(temp.path() / "missing_shard", config, weights, 2);
  fs::remove(temp.path() / "missing_shard" / "model-00002-of-00002.safetensors");
  CHECK_THROWS_AS(load_t5_encoder_model(temp.file("missing_shard")), NotFoundError);
  CHECK_THROWS_WITH(load_t5_encoder_model(temp.file("missing_shard")),
                    Catch::Contains("model.safetensors.index.json") && Catch::Contains("model-00002-of-00002"));

  nlohmann::json wider = config;
  wider["d_ff"] = 32;
  write_folder(temp.path() / "wrong_d_ff", wider, weights, 1);
  CHECK_THROWS_WITH(load_t5_encoder_model(temp.file("wrong_d_ff")),
                    Catch::Contains("config.json") && Catch::Contains("d_ff"));
  nlohmann::json deeper = config;
  deeper["num_layers"] = 3;
  write_folder(temp.path() / "wrong_layers", deeper, weights, 1);
  CHECK_THROWS_WITH(load_t5_encoder_model(temp.file("wrong_layers")), Catch::Contains("num_layers"));

  auto partial = weights;
  partial.erase(std::remove_if(partial.begin(), partial.end(),
                               [](const auto& item) { return item.first.find("block.1.layer.1") != std::string::npos; }),
                partial.end());
  write_folder(temp.path() / "missing_key", config, partial, 1);
  CHECK_THROWS_WITH(load_t5_encoder_model(temp.file("missing_key")),
                    Catch::Contains("missing keys") && Catch::Contains("encoder.block.1.layer.1.DenseReluDense.wo.weight"));

  nlohmann::json unknown = config;
  unknown["feed_forward_proj"] = "gated-swish7";
  write_folder(temp.path() / "unknown_activation", unknown, weights, 1);
  CHECK_THROWS_AS(load_t5_encoder_model(temp.file("unknown_activation")), UnsupportedError);
  nlohmann::json huge = config;
  huge["num_layers"] = 100000;
  write_folder(temp.path() / "huge", huge, weights, 1);
  CHECK_THROWS_WITH(load_t5_encoder_model(temp.file("huge")), Catch::Contains("num_layers is 100000"));
}
