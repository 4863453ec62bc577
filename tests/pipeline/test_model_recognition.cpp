// Recognition of single model files (pipeline/model_type.h): listings with the real releases'
// key names and distinguishing shapes, the fixture files, and the files refused with what they
// look like.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "core/diagnostics/error.h"
#include "models/clip/clip_text_model.h"
#include "models/flux/flux_config.h"
#include "models/t5/t5_config.h"
#include "models/unet/unet_config.h"
#include "models/vae/autoencoder_kl_config.h"
#include "pipeline/model_type.h"
#include "pipeline/release_configs.h"
#include "schedulers/scheduler.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"

using namespace flashps;

namespace {

// Names and shapes only: recognition never reads a tensor.
class ListingOnly final : public CheckpointTensors {
 public:
  explicit ListingOnly(std::map<std::string, CheckpointEntry> entries) : entries_(std::move(entries)) {}
  const std::string& source() const override { return source_; }
  const std::map<std::string, CheckpointEntry>& entries() const override { return entries_; }
  at::Tensor read(const std::string& key) const override { throw Error("listing only: " + key); }
  void release(const std::string&) const override {}

 private:
  std::string source_ = "listing";
  std::map<std::string, CheckpointEntry> entries_;
};

using Listing = std::map<std::string, std::vector<int64_t>>;

CheckpointSource listing(const Listing& shapes) {
  std::map<std::string, CheckpointEntry> entries;
  for (const auto& [key, shape] : shapes) entries[key] = {shape, "F16", true, "listing"};
  CheckpointSource source;
  source.path = "model.safetensors";
  source.format = "safetensors";
  source.tensors = std::make_shared<ListingOnly>(std::move(entries));
  return source;
}

// The keys diffusers' single-file loader decides on, with the real releases' widths.
Listing sd_listing(int in_channels, int context_width, const std::string& text_keys) {
  const std::string unet = "model.diffusion_model.";
  Listing keys = {{unet + "input_blocks.0.0.weight", {320, in_channels, 3, 3}},
                  {unet + "input_blocks.1.1.transformer_blocks.0.attn2.to_k.weight", {320, context_width}},
                  {unet + "out.2.weight", {4, 320, 3, 3}},
                  {"first_stage_model.encoder.conv_in.weight", {128, 3, 3, 3}}};
  keys[text_keys] = {49408, context_width};
  return keys;
}

Listing sdxl_listing(int in_channels) {
  const std::string unet = "model.diffusion_model.";
  return {{unet + "input_blocks.0.0.weight", {320, in_channels, 3, 3}},
          {unet + "label_emb.0.0.weight", {1280, 2816}},
          {"first_stage_model.encoder.conv_in.weight", {128, 3, 3, 3}},
          {"conditioner.embedders.0.transformer.text_model.embeddings.token_embedding.weight", {49408, 768}},
          {"conditioner.embedders.1.model.token_embedding.weight", {49408, 1280}},
          {"conditioner.embedders.1.model.transformer.resblocks.9.mlp.c_proj.bias", {1280}}};
}

Listing flux_listing(const std::string& prefix, int img_in_width, bool guidance) {
  Listing keys = {{prefix + "img_in.weight", {3072, img_in_width}},
                  {prefix + "double_blocks.0.img_attn.norm.key_norm.scale", {128}},
                  {prefix + "single_blocks.0.linear1.weight", {21504, 3072}},
                  {prefix + "final_layer.linear.weight", {64, 3072}}};
  if (guidance) keys[prefix + "guidance_in.in_layer.weight"] = {3072, 256};
  return keys;
}

std::string recognised_name(const Listing& keys, const std::string& model_type = "") {
  return recognise_checkpoint(listing(keys), model_type).type->name;
}

std::string refusal(const Listing& keys) {
  try {
    recognise_checkpoint(listing(keys));
  } catch (const UnsupportedError& error) {
    return error.what();
  }
  return "(not refused)";
}

}  // namespace

TEST_CASE("single files: each real release variant is recognised from its keys and widths", "[model_files]") {
  const std::string clip = "cond_stage_model.transformer.text_model.embeddings.token_embedding.weight";
  const std::string open_clip = "cond_stage_model.model.token_embedding.weight";
  CHECK(recognised_name(sd_listing(4, 768, clip)) == "sd15");
  CHECK(recognised_name(sd_listing(9, 768, clip)) == "sd15-inpaint");
  // SD 2 is taken for 2.1 (768 px, v-prediction) as diffusers does; sd2 is the 512-px base.
  CHECK(recognised_name(sd_listing(4, 1024, open_clip)) == "sd2-v");
  CHECK(recognised_name(sd_listing(9, 1024, open_clip)) == "sd2-inpaint");
  CHECK(recognised_name(sd_listing(4, 1024, open_clip), "sd2") == "sd2");
  CHECK(recognised_name(sdxl_listing(4)) == "sdxl");
  CHECK(recognised_name(sdxl_listing(9)) == "sdxl-inpaint");
  CHECK(recognised_name(flux_listing("", 64, true)) == "flux-dev");
  CHECK(recognised_name(flux_listing("", 64, false)) == "flux-schnell");
  CHECK(recognised_name(flux_listing("", 384, true)) == "flux-fill");
  CHECK(recognised_name(flux_listing("model.diffusion_model.", 384, true)) == "flux-fill");

  const RecognisedFile sdxl = recognise_checkpoint(listing(sdxl_listing(9)));
  CHECK(sdxl.components.denoiser == std::optional<std::string>("model.diffusion_model."));
  CHECK(sdxl.components.vae == std::optional<std::string>("first_stage_model."));
  CHECK(sdxl.components.text_encoder == std::optional<std::string>("conditioner.embedders.0."));
  CHECK(sdxl.components.text_encoder_2 == std::optional<std::string>("conditioner.embedders.1."));
  CHECK_FALSE(sdxl.type_given);

  // ComfyUI's all-in-one Flux checkpoint: the parts under their prefixes; the split file has none.
  Listing comfy = flux_listing("model.diffusion_model.", 64, true);
  comfy["vae.encoder.conv_in.weight"] = {128, 3, 3, 3};
  comfy["text_encoders.clip_l.transformer.text_model.final_layer_norm.weight"] = {768};
  comfy["text_encoders.t5xxl.transformer.encoder.final_layer_norm.weight"] = {4096};
  const RecognisedFile all_in_one = recognise_checkpoint(listing(comfy));
  CHECK(all_in_one.components.vae == std::optional<std::string>("vae."));
  CHECK(all_in_one.components.text_encoder == std::optional<std::string>("text_encoders.clip_l."));
  CHECK(all_in_one.components.text_encoder_2 == std::optional<std::string>("text_encoders.t5xxl."));
  const RecognisedFile split = recognise_checkpoint(listing(flux_listing("", 384, true)));
  CHECK(split.components.denoiser == std::optional<std::string>(""));
  CHECK_FALSE(split.components.vae);
  CHECK_FALSE(split.components.text_encoder_2);
}

TEST_CASE("single files: --model-type overrides within the family only", "[model_files]") {
  CHECK(recognised_name(flux_listing("", 64, true), "flux-schnell") == "flux-schnell");
  CHECK(recognise_checkpoint(listing(flux_listing("", 64, true)), "flux-schnell").type_given);
  CHECK_THROWS_WITH(recognise_checkpoint(listing(flux_listing("", 64, true)), "sd15"),
                    Catch::Contains("holds a flux model") && Catch::Contains("not a stable-diffusion one"));
  CHECK_THROWS_AS(recognise_checkpoint(listing(flux_listing("", 64, true)), "flux-kontext"), InvalidArgumentError);
  CHECK_THROWS_WITH(recognise_checkpoint(listing(flux_listing("", 64, true)), "flux-kontext"),
                    Catch::Contains("unknown type \"flux-kontext\"") && Catch::Contains("flux-fill"));
}

TEST_CASE("single files: other families and lone components are refused with what they look like", "[model_files]") {
  CHECK_THAT(refusal({{"model.diffusion_model.joint_blocks.0.context_block.adaLN_modulation.1.bias", {9216}}}),
             Catch::Contains("Stable Diffusion 3"));
  CHECK_THAT(refusal({{"lora_unet_double_blocks_0_img_attn_qkv.lora_down.weight", {8, 3072}}}),
             Catch::Contains("a LoRA"));
  CHECK_THAT(refusal({{"transformer.transformer_blocks.0.attn.to_q.lora_A.weight", {8, 3072}}}),
             Catch::Contains("a LoRA"));
  CHECK_THAT(refusal({{"encoder.down.0.block.0.conv1.weight", {128, 128, 3, 3}},
                      {"decoder.up.0.block.0.conv1.weight", {128, 128, 3, 3}}}),
             Catch::Contains("a VAE alone") && Catch::Contains("--vae"));
  CHECK_THAT(refusal({{"text_model.embeddings.token_embedding.weight", {49408, 768}}}),
             Catch::Contains("CLIP text encoder alone") && Catch::Contains("--text-encoder"));
  CHECK_THAT(refusal({{"encoder.block.0.layer.0.SelfAttention.q.weight", {4096, 4096}}, {"shared.weight", {32128, 4096}}}),
             Catch::Contains("T5 text encoder alone") && Catch::Contains("--text-encoder-2"));
  CHECK_THAT(refusal({{"control_model.time_embed.0.weight", {1280, 320}}}), Catch::Contains("ControlNet"));
  CHECK_THAT(refusal(flux_listing("", 128, true)), Catch::Contains("Depth or Canny"));
  CHECK_THAT(refusal(sd_listing(8, 768, "cond_stage_model.transformer.text_model.x")), Catch::Contains("InstructPix2Pix"));
  CHECK_THAT(refusal({{"something.else", {3}}}),
             Catch::Contains("no supported model recognised") && Catch::Contains("\"something.else\""));
}

TEST_CASE("single files: pickled checkpoints are refused, saying why and what to convert with", "[model_files]") {
  test::TempDir dir;
  const auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(dir.file(name), std::ios::binary) << bytes;
    return dir.file(name);
  };
  // By name, and by content whatever the name (torch.save's zip archive, a raw pickle stream).
  for (const std::string& path : {write("model.ckpt", "anything"), write("zip.safetensors", std::string("PK\3\4rest", 8)),
                                  write("raw.safetensors", std::string("\x80\x02}q\0.more", 10))}) {
    INFO(path);
    CHECK_THROWS_AS(open_checkpoint_source(path), UnsupportedError);
    CHECK_THROWS_WITH(open_checkpoint_source(path), Catch::Contains("pickled PyTorch checkpoint") &&
                                                        Catch::Contains("runs code") &&
                                                        Catch::Contains("Convert it to .safetensors"));
  }
}

TEST_CASE("single files: every fixture file is recognised as its folder says", "[model_files][fixtures]") {
  const auto root = test::fixtures_root();
  if (!root) {
    WARN("SKIPPED: ../shared/fixtures not found (set FLASHPS_FIXTURES_DIR)");
    return;
  }
  int files = 0;
  for (const auto& folder : std::filesystem::directory_iterator(*root)) {
    const std::string name = folder.path().filename().string();
    if (name.rfind("single_file_", 0) != 0 && name.rfind("gguf_", 0) != 0) continue;
    // The type the folder's name promises (its README: which release each fixture imitates).
    const bool inpaint = name.find("inpaint") != std::string::npos;
    const std::string expected = name.find("flux_fill") != std::string::npos ? "flux-fill"
                                 : name.find("sdxl") != std::string::npos    ? (inpaint ? "sdxl-inpaint" : "sdxl")
                                 : name.find("_sd_") != std::string::npos    ? (inpaint ? "sd15-inpaint" : "sd15")
                                                                             : "";
    for (const auto& entry : std::filesystem::directory_iterator(folder)) {
      const std::string file = entry.path().filename().string();
      const std::string extension = entry.path().extension().string();
      if ((extension != ".safetensors" && extension != ".gguf") || file.rfind("cases", 0) == 0) continue;
      INFO(entry.path().string());
      const auto source = open_checkpoint_source(entry.path().string());
      const RecognisedFile recognised = recognise_checkpoint(*source);
      if (!expected.empty()) CHECK(std::string(recognised.type->name) == expected);
      CHECK(recognised.components.denoiser.has_value());
      ++files;
    }
  }
  INFO("fixture model files recognised: " << files);
  CHECK(files > 0);
}

TEST_CASE("single files: fixture LoRA files passed as a model are refused", "[model_files][fixtures]") {
  for (const char* fixture : {"lora_flux_tiny", "lora_sd_tiny"}) {
    const auto dir = test::fixture_dir(fixture);
    if (!dir) {
      WARN("SKIPPED: fixture " << fixture << " not found");
      continue;
    }
    for (const auto& entry : std::filesystem::directory_iterator(*dir)) {
      if (entry.path().filename().string().rfind("lora_", 0) != 0) continue;
      INFO(entry.path().string());
      const auto source = open_checkpoint_source(entry.path().string());
      CHECK_THROWS_WITH(recognise_checkpoint(*source), Catch::Contains("looks like a LoRA"));
    }
  }
}

TEST_CASE("single files: every release config of the built-in tables parses as its component's config",
          "[model_files]") {
  // A config a parser refuses (SD 2.1's upcast_attention once) would stop every real file of
  // that type from loading; the tiny fixtures carry their own configs and never reach these.
  for (const ModelType& type : model_types()) {
    INFO("model type " << type.name);
    const auto parsed = [&](const std::string& relative, auto parse) {
      const nlohmann::json config = release_file(type, relative);
      INFO(relative);
      if (!config.is_null()) CHECK_NOTHROW(parse(config, std::string(type.name) + " " + relative));
      return !config.is_null();
    };
    CHECK(parsed("scheduler/scheduler_config.json", make_scheduler));
    CHECK(parsed("vae/config.json", parse_autoencoder_kl_config));
    CHECK(parsed("text_encoder/config.json", parse_clip_text_config));
    if (std::string(type.family) == "flux") {
      CHECK(parsed("transformer/config.json", FluxConfig::from_json));
      CHECK(parsed("text_encoder_2/config.json", T5Config::from_json));
    } else {
      CHECK(parsed("unet/config.json", parse_unet_config));
      parsed("text_encoder_2/config.json", parse_clip_text_config);  // SDXL's OpenCLIP bigG
    }
  }
}
