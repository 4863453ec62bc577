// Components as single files and all-in-one checkpoints hold them: one file split by key prefix
// (tensors_under_prefix), the transforms of a key layout, and every layout table checked against
// the key_map.json of each single_file fixture present (made with diffusers' conversion code).
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "models/clip/clip_layouts.h"
#include "models/flux/flux_bfl_layout.h"
#include "models/loading/checkpoint_file.h"
#include "models/loading/checkpoint_prefix.h"
#include "models/unet/unet_ldm_layout.h"
#include "models/vae/autoencoder_ldm_layout.h"
#include "support/fixture_kinds.h"
#include "support/fixtures.h"

using namespace flashps;

namespace {

// Tensors held in memory, counting releases.
class MemoryTensors : public CheckpointTensors {
 public:
  explicit MemoryTensors(std::map<std::string, at::Tensor> tensors) : tensors_(std::move(tensors)) {
    for (const auto& [key, tensor] : tensors_) entries_[key] = {tensor.sizes().vec(), "F32", true, source_};
  }
  const std::string& source() const override { return source_; }
  const std::map<std::string, CheckpointEntry>& entries() const override { return entries_; }
  at::Tensor read(const std::string& key) const override { return tensors_.at(key); }
  void release(const std::string& key) const override { released.push_back(key); }
  mutable std::vector<std::string> released;

 private:
  std::string source_ = "memory.safetensors";
  std::map<std::string, at::Tensor> tensors_;
  std::map<std::string, CheckpointEntry> entries_;
};

KeyPiece expected_piece(const std::string& stored_key, const std::string& transform) {
  static const std::regex rows(R"(rows \[(\d+), (\d+)\))");
  static const std::regex reshape(R"(reshape \[(\d+), (\d+), 1, 1\] -> \[(\d+), (\d+)\])");
  std::smatch match;
  if (transform == "identity") return {stored_key};
  if (transform == "swap_halves") return {stored_key, KeyPiece::Transform::swap_halves};
  if (transform == "transpose") return {stored_key, KeyPiece::Transform::transpose};
  if (std::regex_match(transform, match, reshape)) return {stored_key, KeyPiece::Transform::squeeze_1x1};
  if (std::regex_match(transform, match, rows))
    return {stored_key, KeyPiece::Transform::rows, std::stoll(match[1]), std::stoll(match[2])};
  FAIL("key_map.json has a transform this test does not know: " << transform);
  return {};
}

// The layout table FlashPS uses for a component of class `class_name`.
KeyLayout component_layout(const std::string& class_name, const CheckpointTensors& stored,
                           const nlohmann::json& config, const std::string& source) {
  if (class_name == "FluxTransformer2DModel") return flux_bfl_layout(stored);
  if (class_name == "UNet2DConditionModel") return unet_ldm_layout(stored, parse_unet_config(config, source));
  if (class_name == "AutoencoderKL")
    return autoencoder_ldm_layout(stored, parse_autoencoder_kl_config(config, source));
  if (class_name == "CLIPTextModel" || class_name == "CLIPTextModelWithProjection")
    return clip_text_layout(stored, parse_clip_text_config(config, source)).layout;
  FAIL("no layout table for component class " << class_name);
  return {};
}

}  // namespace

TEST_CASE("tensors_under_prefix shows one component of a shared file", "[checkpoints][layouts]") {
  auto file = std::make_shared<MemoryTensors>(std::map<std::string, at::Tensor>{
      {"model.diffusion_model.conv_in.weight", at::ones({2, 3})},
      {"model.diffusion_model.out.2.bias", at::full({2}, 7.0)},
      {"first_stage_model.encoder.conv_in.weight", at::zeros({1})},
  });
  const auto unet = tensors_under_prefix(file, "model.diffusion_model.");
  REQUIRE(unet->entries().size() == 2);
  CHECK(unet->entries().count("conv_in.weight"));
  CHECK(unet->entries().at("conv_in.weight").shape == std::vector<int64_t>{2, 3});
  CHECK(unet->entries().at("out.2.bias").origin == "memory.safetensors: model.diffusion_model.out.2.bias");
  CHECK(at::equal(unet->read("out.2.bias"), at::full({2}, 7.0)));
  unet->release("out.2.bias");
  CHECK(file->released == std::vector<std::string>{"model.diffusion_model.out.2.bias"});
  CHECK_THROWS_WITH(unet->read("encoder.conv_in.weight"), Catch::Contains("encoder.conv_in.weight"));
  CHECK(tensors_under_prefix(file, "")->entries().size() == 3);
  CHECK_THROWS_WITH(tensors_under_prefix(file, "cond_stage_model."),
                    Catch::Contains("memory.safetensors") && Catch::Contains("cond_stage_model."));
}

TEST_CASE("key layouts transpose matrices and drop the keys they are told to", "[checkpoints][layouts]") {
  const at::Tensor projection = at::arange(6, at::kFloat).reshape({2, 3});
  auto stored = std::make_unique<MemoryTensors>(std::map<std::string, at::Tensor>{
      {"text_projection", projection}, {"logit_scale", at::ones({})}, {"stray", at::ones({1})}});
  KeyLayout layout{{"text_projection.weight", {"text_projection", KeyPiece::Transform::transpose}}};
  const auto seen = tensors_in_layout(std::move(stored), layout, "test", {"logit_scale"});
  CHECK(seen->entries().at("text_projection.weight").shape == std::vector<int64_t>{3, 2});
  CHECK(at::equal(seen->read("text_projection.weight"), projection.t()));
  CHECK(!seen->entries().count("logit_scale"));
  CHECK(seen->entries().count("stray"));  // unknown keys stay visible for the loader to name

  auto vector = std::make_unique<MemoryTensors>(std::map<std::string, at::Tensor>{{"v", at::ones({4})}});
  CHECK_THROWS_WITH(tensors_in_layout(std::move(vector), {{"w", {"v", KeyPiece::Transform::transpose}}}, "test"),
                    Catch::Contains("not a matrix"));
}

TEST_CASE("OpenCLIP and HF CLIP layouts drop what diffusers drops, and name the rest", "[checkpoints][layouts]") {
  ClipTextConfig config;
  config.hidden_size = 4;
  config.num_hidden_layers = 2;  // SD 2.x: its encoder uses 23 of the 24 stored layers
  std::map<std::string, at::Tensor> open_clip = {
      {"token_embedding.weight", at::ones({10, 4})}, {"positional_embedding", at::ones({5, 4})},
      {"text_projection", at::ones({4, 4})},         {"logit_scale", at::ones({})},
      {"ln_final.weight", at::ones({4})},            {"unknown.weight", at::ones({1})}};
  for (const char* layer : {"0", "1", "2"}) {
    const std::string block = std::string("transformer.resblocks.") + layer + ".";
    open_clip[block + "ln_1.weight"] = at::ones({4});
    open_clip[block + "attn.in_proj_weight"] = at::arange(48, at::kFloat).reshape({12, 4});
  }
  const MemoryTensors stored(open_clip);
  const ClipTextLayout layout = clip_text_layout(stored, config);
  CHECK(layout.name == "OpenCLIP text");
  CHECK(layout.dropped == std::set<std::string>{"logit_scale", "text_projection", "transformer.resblocks.2.ln_1.weight",
                                                "transformer.resblocks.2.attn.in_proj_weight"});
  const KeyPiece& v = layout.layout.at("text_model.encoder.layers.1.self_attn.v_proj.weight");
  CHECK(v.stored_key == "transformer.resblocks.1.attn.in_proj_weight");
  CHECK((v.row_begin == 8 && v.row_end == 12));
  CHECK(!layout.layout.count("text_projection.weight"));
  config.projection_dim = 4;  // CLIPTextModelWithProjection keeps it, transposed
  CHECK(clip_text_layout(stored, config).layout.at("text_projection.weight").transform == KeyPiece::Transform::transpose);
  // The unknown key stays for the strict loader to name.
  const auto seen = tensors_in_layout(std::make_unique<MemoryTensors>(open_clip), layout.layout, layout.name, layout.dropped);
  CHECK(seen->entries().count("unknown.weight"));
  CHECK(!seen->entries().count("logit_scale"));

  config.projection_dim = 0;
  const MemoryTensors hugging_face({{"transformer.text_model.embeddings.position_ids", at::zeros({1, 5})},
                                    {"transformer.text_model.final_layer_norm.weight", at::ones({4})},
                                    {"transformer.text_model.embeddings.token_embedding.weight", at::ones({10, 4})},
                                    {"transformer.text_projection.weight", at::ones({4, 4})}});
  const ClipTextLayout hf = clip_text_layout(hugging_face, config);
  CHECK(hf.layout.at("text_model.final_layer_norm.weight").stored_key == "transformer.text_model.final_layer_norm.weight");
  CHECK(hf.dropped == std::set<std::string>{"transformer.text_model.embeddings.position_ids",
                                            "transformer.text_projection.weight"});
}

TEST_CASE("every layout table maps each single-file fixture's keys as diffusers does",
          "[checkpoints][layouts][fixture]") {
  const auto fixtures = test::fixture_dirs_of_kind("single_file");
  if (fixtures.empty()) {
    WARN("SKIPPED: no single_file fixtures (set FLASHPS_FIXTURES_DIR or place ../shared/fixtures beside the repository)");
    return;
  }
  for (const auto& dir : fixtures) {
    const nlohmann::json index = read_json_file((dir / "cases.json").string());
    if (!index.contains("key_map")) continue;  // a variant without the map: nothing to compare
    const nlohmann::json key_map = read_json_file((dir / index.at("key_map").get<std::string>()).string());
    // The file every component is in (Flux fixtures list several equal-keyed files: the first).
    const std::string checkpoint = index.contains("checkpoint") ? index.at("checkpoint").get<std::string>()
                                                                : index.at("checkpoints").begin().key();
    std::shared_ptr<const CheckpointTensors> file = open_checkpoint_file((dir / checkpoint).string());
    const auto& components = index.at("components");
    size_t mapped_keys = 0;
    for (const auto& [name, component] : components.items()) {
      INFO(dir.filename().string() << " component " << name);
      const std::string prefix = component.value("prefix", "");
      const std::string config_path = (dir / component.at("config").get<std::string>()).string();
      const auto stored = tensors_under_prefix(file, prefix);
      const KeyLayout layout = component_layout(component.at("_class_name"), *stored, read_json_file(config_path), config_path);
      size_t targets = 0;
      for (const auto& [stored_key, pieces] : key_map.items()) {
        for (const auto& piece : pieces) {
          if (piece.value("component", components.size() == 1 ? name : std::string()) != name) continue;
          const std::string key = piece.at("diffusers");
          INFO(stored_key << " -> " << key << " (" << piece.at("transform").get<std::string>() << ")");
          ++targets;
          const auto found = layout.find(key);
          REQUIRE(found != layout.end());
          const KeyPiece expected = expected_piece(stored_key, piece.at("transform"));
          CHECK(prefix + found->second.stored_key == expected.stored_key);
          CHECK(found->second.transform == expected.transform);
          CHECK(found->second.row_begin == expected.row_begin);
          CHECK(found->second.row_end == expected.row_end);
        }
      }
      CHECK(targets > 0);
      CHECK(layout.size() == targets);  // nothing mapped that diffusers does not map
      mapped_keys += targets;
    }
    CHECK(mapped_keys > 0);
  }
}
