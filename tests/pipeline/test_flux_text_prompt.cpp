// Flux folders with text encoders edit from a text prompt, as FluxPipeline encodes it (CLIP
// pooled vector + T5 states), with the embeddings kept in the store; broken folders are named.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "models/random/random_model.h"
#include "models/t5/t5_tokenizer.h"
#include "pipeline/flux/flux_inpaint_pipeline.h"
#include "support/temp_dir.h"
#include "support/tiny_pipeline.h"

using namespace flashps;
namespace fs = std::filesystem;

namespace {

std::string text_model(const test::TempDir& dir, const std::string& name = "text_model") {
  RandomFluxModelSpec spec = small_fill_model_spec();
  spec.transformer.num_layers = 1;
  spec.transformer.num_single_layers = 1;
  spec.transformer.num_attention_heads = 2;
  spec.vae_config["block_out_channels"] = {8, 8, 8, 8};
  spec.text_encoders = true;
  spec.max_sequence_length = 16;
  spec.seed = 5;
  const std::string path = dir.file(name);
  write_random_flux_model(path, spec);
  return path;
}

EditRequest prompt_request(const std::string& prompt, uint64_t seed = 9) {
  EditRequest request = test::request_for(test::gradient_image(32, 32), test::box_mask(32, 32, 8, 8, 16), seed, 2);
  request.prompt = prompt;
  return request;
}

}  // namespace

TEST_CASE("a Flux folder with text encoders edits from a prompt and keeps its embeddings", "[pipeline][t5]") {
  test::TempDir dir;
  const std::string path = text_model(dir);
  CHECK(fs::exists(fs::path(path) / "text_encoder_2" / "model.safetensors.index.json"));  // sharded, as real folders
  auto store = std::make_shared<engine::MemoryCaptureStore>();
  auto pipeline = FluxInpaintPipeline::load(path, at::kFloat, store);
  REQUIRE(pipeline->has_text_encoder());
  const FluxTextEncoders& encoders = pipeline->components().text;
  CHECK(encoders.max_sequence_length == 16);

  const EditResult first = pipeline->edit(prompt_request("a red cat on a tree"));
  CHECK_FALSE(first.stats.prompt_cache_hit);
  CHECK(*encoders.encoder_runs == 1);
  CHECK_THAT(test::joined_notes(first.stats), Catch::Contains("prompt embeddings: encoded"));

  // What the edit used (the store's copy) equals the components' own outputs on the tokens
  // FluxPipeline makes: CLIP's pooler_output at 77 tokens, T5's last_hidden_state at 16.
  const FluxPromptTokens tokens = tokenize_flux_prompt(encoders, "a red cat on a tree");
  REQUIRE(tokens.clip_ids.size() == 77);
  REQUIRE(tokens.t5_ids.size() == 16);
  CHECK(tokens.t5_ids == encoders.tokenizer_2->encode("a red cat on a tree", 16).input_ids);
  const auto stored = find_prompt_embeddings(*store, encoders, tokens);
  REQUIRE(stored);
  const at::Tensor clip_ids = at::tensor(at::ArrayRef<int64_t>(tokens.clip_ids), at::kLong).unsqueeze(0);
  const at::Tensor t5_ids = at::tensor(at::ArrayRef<int64_t>(tokens.t5_ids), at::kLong).unsqueeze(0);
  CHECK(at::equal(stored->pooled_prompt_embeds, encoders.text_encoder->forward(clip_ids).pooler_output[0]));
  CHECK(at::equal(stored->prompt_embeds, encoders.text_encoder_2->forward(t5_ids)[0]));
  CHECK(stored->prompt_embeds.sizes() == at::IntArrayRef{16, pipeline->components().transformer->config().joint_attention_dim});

  SECTION("the same prompt again: the embeddings come from the store, no encoder runs, the same image") {
    const EditResult second = pipeline->edit(prompt_request("a red cat on a tree"));
    CHECK(second.stats.prompt_cache_hit);
    CHECK(*encoders.encoder_runs == 1);
    CHECK_THAT(test::joined_notes(second.stats), Catch::Contains("reused from the store"));
    CHECK(test::max_pixel_difference(second.image, first.image) == 0);
  }
  SECTION("another prompt steers the fill elsewhere; the unmasked pixels stay") {
    const EditResult other = pipeline->edit(prompt_request("the sky with a dog"));
    CHECK_FALSE(other.stats.prompt_cache_hit);
    CHECK(*encoders.encoder_runs == 2);
    CHECK(test::max_pixel_difference(other.image, first.image) > 0);
    const Image template_image = test::gradient_image(32, 32);
    int outside_changed = 0;
    for (int y = 0; y < 32; ++y)
      for (int x = 0; x < 32; ++x)
        if (x < 4 || x >= 28 || y < 4 || y >= 28)
          for (int c = 0; c < 3; ++c) outside_changed += other.image.at(x, y, c) != template_image.at(x, y, c);
    CHECK(outside_changed == 0);
  }
  SECTION("given embeddings win over the text; a long prompt is cut with a note; no negative prompt") {
    EditRequest given = prompt_request("ignored");
    given.conditioning = *stored;
    given.conditioning.source = "test embeddings";
    const EditResult with_embeddings = pipeline->edit(given);
    CHECK(*encoders.encoder_runs == 1);
    CHECK(test::max_pixel_difference(with_embeddings.image, first.image) == 0);
    CHECK_THAT(test::joined_notes(with_embeddings.stats), Catch::Contains("text prompt is not used"));

    std::string long_prompt;
    for (int i = 0; i < 40; ++i) long_prompt += "a red photo of a cat ";
    EditRequest long_request = prompt_request(long_prompt);
    long_request.negative_prompt = "blurry";
    const EditResult cut = pipeline->edit(long_request);
    CHECK_THAT(test::joined_notes(cut.stats), Catch::Contains("cut off"));
    CHECK_THAT(test::joined_notes(cut.stats), Catch::Contains("no negative prompt"));
    EditRequest too_long = prompt_request("a cat");
    too_long.max_sequence_length = 513;
    CHECK_THROWS_AS(pipeline->edit(too_long), InvalidArgumentError);
    too_long.max_sequence_length = 8;
    CHECK(pipeline->edit(too_long).stats.steps_run == 2);
  }
}

TEST_CASE("the prompt embeddings kept in a store serve a pipeline loaded later", "[pipeline][t5]") {
  test::TempDir dir;
  const std::string path = text_model(dir);
  auto store = std::make_shared<engine::MemoryCaptureStore>();
  auto first = FluxInpaintPipeline::load(path, at::kFloat, store);
  first->edit(prompt_request("a photo"));
  auto second = FluxInpaintPipeline::load(path, at::kFloat, store);
  CHECK(second->edit(prompt_request("a photo")).stats.prompt_cache_hit);
  CHECK(*second->components().text.encoder_runs == 0);
  // bfloat16 encoders have another fingerprint: their embeddings are not the float32 ones.
  auto half = FluxInpaintPipeline::load(path, at::kBFloat16, store);
  CHECK(half->components().text.text_encoder_2->config().d_model == 128);
  CHECK_FALSE(half->edit(prompt_request("a photo")).stats.prompt_cache_hit);
}

TEST_CASE("Flux folders with broken text encoders give named errors", "[pipeline][t5]") {
  test::TempDir dir;
  const std::string path = text_model(dir);
  SECTION("no tokenizer_2") {
    fs::remove_all(fs::path(path) / "tokenizer_2");
    CHECK_THROWS_WITH(FluxInpaintPipeline::load(path, at::kFloat),
                      Catch::Contains("tokenizer_2") && Catch::Contains("no tokenizer_2/ folder"));
  }
  SECTION("a shard the index names is missing") {
    fs::remove(fs::path(path) / "text_encoder_2" / "model-00002-of-00002.safetensors");
    CHECK_THROWS_WITH(FluxInpaintPipeline::load(path, at::kFloat),
                      Catch::Contains("model.safetensors.index.json") && Catch::Contains("model-00002-of-00002"));
  }
  SECTION("model_index.json names text_encoder_2 but not tokenizer_2") {
    nlohmann::json index = read_json_file((fs::path(path) / "model_index.json").string());
    index.erase("tokenizer_2");
    write_json_file((fs::path(path) / "model_index.json").string(), index);
    CHECK_THROWS_WITH(FluxInpaintPipeline::load(path, at::kFloat), Catch::Contains("not tokenizer_2"));
  }
  SECTION("a T5 whose width is not the transformer's joint_attention_dim") {
    nlohmann::json config = read_json_file((fs::path(path) / "text_encoder_2" / "config.json").string());
    config["d_model"] = 64;
    write_json_file((fs::path(path) / "text_encoder_2" / "config.json").string(), config);
    CHECK_THROWS_WITH(FluxInpaintPipeline::load(path, at::kFloat), Catch::Contains("d_model"));
  }
  SECTION("a corrupt spiece.model") {
    std::ofstream(fs::path(path) / "tokenizer_2" / "spiece.model", std::ios::binary) << "\x0a\xff\xff\xff";
    CHECK_THROWS_AS(FluxInpaintPipeline::load(path, at::kFloat), CorruptDataError);
  }
  SECTION("the text-free folder still says the text is not used") {
    auto plain = FluxInpaintPipeline::load(test::tiny_model(dir), at::kFloat);
    CHECK_FALSE(plain->has_text_encoder());
    CHECK_THAT(test::joined_notes(plain->edit(prompt_request("a cat")).stats),
               Catch::Contains("no text encoder: the text prompt is not used"));
  }
}
