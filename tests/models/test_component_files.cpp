// Component files as ComfyUI keeps them and all-in-one files hold them: a T5 encoder under
// "text_encoders.t5xxl.transformer." beside other components, with "shared.weight" or only
// "encoder.embed_tokens.weight", loads bit-identical to its transformers folder.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/files/json_file.h"
#include "core/files/tensor_io.h"
#include "models/loading/checkpoint_file.h"
#include "models/loading/checkpoint_prefix.h"
#include "models/t5/t5_encoder_model.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"

using namespace flashps;

namespace {

// The models' parameters are equal; the token embedding is named after the key it was loaded from.
void require_same_parameters(const torch::nn::Module& actual_model, const torch::nn::Module& expected_model,
                             const std::string& embedding_key) {
  const auto expected = expected_model.named_parameters();
  const auto actual = actual_model.named_parameters();
  REQUIRE(actual.size() == expected.size());
  for (const auto& item : expected) {
    const std::string key = item.key() == "shared.weight" ? embedding_key : item.key();
    INFO(key);
    REQUIRE(actual.contains(key));
    CHECK(at::equal(actual[key], item.value()));
  }
}

}  // namespace

TEST_CASE("a T5 encoder inside an all-in-one file loads as its folder does", "[checkpoints][t5][fixture]") {
  FLASHPS_REQUIRE_FIXTURE(dir, "t5_encoder_tiny");
  const std::string config_path = (dir / "config.json").string();
  const T5Config config = T5Config::from_json(read_json_file(config_path), config_path);
  const T5EncoderModel from_folder = load_t5_encoder_model(dir.string());
  const auto tensors = load_safetensors((dir / "model.safetensors").string());
  REQUIRE(tensors.count("shared.weight"));
  test::TempDir temp;
  for (const bool embed_tokens_only : {false, true}) {
    INFO((embed_tokens_only ? "encoder.embed_tokens.weight only" : "shared.weight"));
    std::vector<std::pair<std::string, at::Tensor>> stored = {{"vae.decoder.conv_in.weight", at::zeros({2, 2})}};
    for (const auto& [key, tensor] : tensors) {
      const std::string name = embed_tokens_only && key == "shared.weight" ? "encoder.embed_tokens.weight" : key;
      stored.emplace_back("text_encoders.t5xxl.transformer." + name, tensor);
    }
    const std::string path = temp.file(embed_tokens_only ? "embed_tokens.safetensors" : "shared.safetensors");
    save_safetensors(path, stored);
    std::shared_ptr<const CheckpointTensors> file = open_checkpoint_file(path);
    const auto t5 = t5_encoder_tensors(tensors_under_prefix(file, "text_encoders.t5xxl."));
    CHECK(t5->entries().count(embed_tokens_only ? "encoder.embed_tokens.weight" : "shared.weight"));
    const T5EncoderModel from_file = load_t5_encoder_model(*t5, config, config_path, at::kFloat);
    require_same_parameters(*from_file, *from_folder,
                            embed_tokens_only ? "encoder.embed_tokens.weight" : "shared.weight");
  }
}
