// `flashps dev random-model --preset --format --quant` (models/random/random_checkpoint.h): each
// format written at small sizes and read back with the file readers: the tensors and their types
// as chosen, the carried configs, values equal (floats) or close (quantized) to the generated
// ones, the same weights in every format of one seed; interrupted writes leave nothing behind.
#include <ATen/ATen.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "bench/edit_benchmark.h"
#include "core/diagnostics/error.h"
#include "core/files/gguf_file.h"
#include "core/files/safetensors.h"
#include "models/flux/flux_transformer.h"
#include "models/loading/checkpoint_tensors.h"
#include "models/loading/checkpoint_prefix.h"
#include "models/loading/layout_writer.h"
#include "models/clip/clip_text_model.h"
#include "models/t5/t5_encoder_model.h"
#include "models/unet/unet_config.h"
#include "models/unet/unet_model.h"
#include "models/vae/autoencoder_kl.h"
#include "models/random/random_checkpoint.h"
#include "models/random/random_layouts.h"
#include "models/random/random_tensors.h"
#include "core/files/json_file.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"

using namespace flashps;
namespace fs = std::filesystem;

namespace {

// The test-size Fill model (small_fill_model_spec's transformer) with small text encoders.
RandomCheckpointRequest tiny_request(RandomModelFormat format, const std::string& quant) {
  RandomCheckpointRequest request;
  request.preset = small_flux_fill_preset("tiny", small_fill_model_spec().transformer);
  request.format = format;
  request.quant = quant;
  request.seed = 5;
  return request;
}

// RMS of (read - generated) over RMS of generated, across every transformer tensor.
double relative_rms_error(const CheckpointTensors& read, const TensorShapes& shapes, uint64_t seed) {
  double error = 0, norm = 0;
  for (const auto& [key, shape] : shapes) {
    INFO(key);
    REQUIRE(read.entries().count(key));
    const at::Tensor expected = random_weight(key, shape, seed);
    const at::Tensor got = read.read(key).to(at::kFloat);
    REQUIRE(got.sizes() == expected.sizes());
    error += (got - expected).pow(2).sum().item<double>();
    norm += expected.pow(2).sum().item<double>();
  }
  return std::sqrt(error / norm);
}

void require_carried_files(const std::string& text) {
  const nlohmann::json files = nlohmann::json::parse(text);
  for (const char* path : {"model_index.json", "transformer/config.json", "vae/config.json", "text_encoder/config.json",
                           "text_encoder_2/config.json", "scheduler/scheduler_config.json", "tokenizer/vocab.json"})
    CHECK(files.contains(path));
  CHECK(files.at("tokenizer_2/spiece.model").get<std::string>().rfind("base64:", 0) == 0);
  CHECK(nlohmann::json::parse(files.at("transformer/config.json").get<std::string>()).at("in_channels") == 384);
}

}  // namespace

TEST_CASE("random GGUF models: ComfyUI-GGUF's tensor types, carried configs, values within the quantization error",
          "[random_checkpoint]") {
  const std::pair<const char*, double> quants[] = {{"q8_0", 0.01}, {"q4_0", 0.15}, {"q5_1", 0.07},
                                                   {"q4_k", 0.15}, {"q6_k", 0.04}, {"f16", 0.001}};
  for (const auto& [quant, tolerance] : quants) {
    INFO("--quant " << quant);
    test::TempDir temp;
    const RandomCheckpointRequest request = tiny_request(RandomModelFormat::gguf, quant);
    const std::string out = temp.file("model");
    const RandomCheckpointResult result = write_random_checkpoint(out, request);
    CHECK(result.files.size() == 4);
    std::string type_name = quant;
    for (char& c : type_name) c = char(std::toupper(c));
    const auto file = GgufFile::open(out + "/tiny-" + type_name + ".gguf");
    CHECK(file->metadata_string("general.architecture") == "flux");
    require_carried_files(*file->metadata_string("flashps.files"));
    auto type_of = [&](const std::string& name) {
      const GgufTensor* tensor = file->find(name);
      REQUIRE(tensor != nullptr);
      return std::string(ggml_type_name(uint32_t(tensor->type)));
    };
    const bool quantized = quant[0] == 'q';
    CHECK(type_of("img_in.weight") == (quantized ? "F32" : "F16"));
    CHECK(type_of("txt_in.weight") == (quantized ? "F16" : type_name));
    CHECK(type_of("double_blocks.0.img_attn.qkv.bias") == "F32");
    CHECK(type_of("single_blocks.3.linear1.weight") == type_name);
    CHECK(type_of("flashps.empty_prompt.prompt_embeds") == "F32");

    const TensorShapes shapes = flux_transformer_shapes(request.preset.spec.transformer);
    const size_t bfl_count =
        stored_tensor_recipes(flux_bfl_layout_for_writing(request.preset.spec.transformer, shapes), shapes, "BFL").size();
    CHECK(file->tensors().size() == 2 + bfl_count);
    const auto read = flux_transformer_tensors(gguf_tensors(file));
    const double error = relative_rms_error(*read, shapes, request.seed);
    INFO("relative RMS error " << error);
    CHECK(error < tolerance);
    CHECK(error > tolerance / 20);  // it was quantized, not stored as float32

    const auto clip = SafetensorsFile::open(out + "/clip_l.safetensors");
    CHECK(clip->find("text_model.embeddings.token_embedding.weight")->dtype == DType::F16);
    require_carried_files(clip->metadata().at("flashps.files"));
    const auto t5 = SafetensorsFile::open(out + "/t5xxl_fp16.safetensors");
    CHECK(t5->find("shared.weight") != nullptr);
    const auto ae = SafetensorsFile::open(out + "/ae.safetensors");  // LDM keys, as BFL ships it
    CHECK(ae->find("encoder.down.0.block.0.conv1.weight") != nullptr);
    CHECK(ae->find("decoder.up.0.upsample.conv.weight") == nullptr);  // up.0: the highest resolution
    CHECK(ae->find("decoder.up.3.upsample.conv.weight") != nullptr);
    CHECK(ae->find("decoder.mid.attn_1.q.weight")->shape.size() == 4);
  }
}

TEST_CASE("random single files hold the folder's weights: float32 bit for bit, fp8 as PyTorch rounds",
          "[random_checkpoint]") {
  test::TempDir temp;
  const RandomCheckpointRequest folder_request = tiny_request(RandomModelFormat::folder, "f32");
  write_random_checkpoint(temp.file("folder"), folder_request);
  const auto folder = safetensors_tensors({SafetensorsFile::open(temp.file("folder/transformer/diffusion_pytorch_model.safetensors"))});
  const TensorShapes shapes = flux_transformer_shapes(folder_request.preset.spec.transformer);
  CHECK(relative_rms_error(*folder, shapes, folder_request.seed) == 0.0);
  CHECK(fs::exists(temp.file("folder/text_encoder_2/model.safetensors")));
  CHECK(fs::exists(temp.file("folder/tokenizer_2/spiece.model")));
  CHECK(!fs::exists(temp.file("folder.partial")));

  const RandomCheckpointRequest f32_request = tiny_request(RandomModelFormat::single_file, "f32");
  write_random_checkpoint(temp.file("model.safetensors"), f32_request);
  const auto f32_file = SafetensorsFile::open(temp.file("model.safetensors"));
  require_carried_files(f32_file->metadata().at("flashps.files"));
  CHECK(f32_file->find("model.diffusion_model.double_blocks.0.img_attn.qkv.weight") != nullptr);
  CHECK(f32_file->find("text_encoders.clip_l.transformer.text_model.final_layer_norm.weight") != nullptr);
  CHECK(f32_file->find("text_encoders.t5xxl.transformer.shared.weight") != nullptr);
  CHECK(f32_file->find("flashps.empty_prompt.pooled_prompt_embeds") != nullptr);
  CHECK(f32_file->find("vae.encoder.mid.attn_1.proj_out.weight") != nullptr);
  const auto from_single = flux_transformer_tensors(safetensors_tensors({f32_file}));
  for (const auto& [key, shape] : shapes) {
    INFO(key);
    CHECK(at::equal(from_single->read(key), folder->read(key)));
  }

  const RandomCheckpointRequest fp8_request = tiny_request(RandomModelFormat::single_file, "fp8");
  write_random_checkpoint(temp.file("fp8.safetensors"), fp8_request);
  const auto fp8_file = SafetensorsFile::open(temp.file("fp8.safetensors"));
  CHECK(fp8_file->find("model.diffusion_model.img_in.weight")->dtype == DType::F8_E4M3);
  CHECK(fp8_file->find("model.diffusion_model.img_in.bias")->dtype == DType::BF16);
  CHECK(fp8_file->find("text_encoders.t5xxl.transformer.shared.weight")->dtype == DType::F16);
  const auto from_fp8 = flux_transformer_tensors(safetensors_tensors({fp8_file}));
  for (const auto& [key, shape] : shapes) {
    const at::Tensor expected = random_weight(key, shape, fp8_request.seed);
    const at::Tensor rounded = expected.dim() < 2 ? expected.to(at::kBFloat16).to(at::kFloat) : expected;
    const at::Tensor error = (from_fp8->read(key) - rounded).abs();
    INFO(key);
    // e4m3fn keeps 3 mantissa bits: within 1/16 of each value (relative), or its subnormal step.
    CHECK((error <= rounded.abs() / 16 + std::ldexp(1.0, -10)).all().item<bool>());
  }
}

TEST_CASE("random-model refuses bad options and leaves nothing when interrupted", "[random_checkpoint]") {
  test::TempDir temp;
  CHECK_THROWS_WITH(write_random_checkpoint(temp.file("x.safetensors"), tiny_request(RandomModelFormat::single_file, "q4_0")),
                    Catch::Contains("--quant: 'q4_0' is not a float type here"));
  CHECK_THROWS_WITH(write_random_checkpoint(temp.file("x"), tiny_request(RandomModelFormat::gguf, "fp8")),
                    Catch::Contains("--quant: 'fp8' is not a GGUF type"));
  RandomCheckpointRequest text = tiny_request(RandomModelFormat::gguf, "q8_0");
  text.text_encoder_quant = "q4_0";
  CHECK_THROWS_WITH(write_random_checkpoint(temp.file("x"), text), Catch::Contains("--text-encoder-quant"));
  CHECK_THROWS_WITH(random_model_format("zip"), Catch::Contains("--format: 'zip'"));
  CHECK_THROWS_WITH(write_random_checkpoint(temp.file("x.gguf"), tiny_request(RandomModelFormat::single_file, "f16")),
                    Catch::Contains("must be a .safetensors file"));

  // Interrupted with a file begun (single file), or with one file complete and the next begun
  // (GGUF folder): neither the final name nor a partial file or folder remains.
  for (RandomModelFormat format : {RandomModelFormat::single_file, RandomModelFormat::gguf}) {
    std::atomic<bool> cancel{false};
    RandomCheckpointRequest request = tiny_request(format, format == RandomModelFormat::gguf ? "q4_0" : "f16");
    request.cancel = &cancel;
    bool saw_partial = false;
    request.progress = [&](const std::string& line) {
      if (line.rfind("writing cancelled.safetensors", 0) == 0 || line.rfind("writing clip_l.safetensors", 0) == 0) {
        saw_partial = !fs::is_empty(temp.path());
        cancel = true;
      }
    };
    const std::string out = temp.file(format == RandomModelFormat::gguf ? "cancelled" : "cancelled.safetensors");
    CHECK_THROWS_AS(write_random_checkpoint(out, request), Cancelled);
    CHECK(saw_partial);
    CHECK(fs::is_empty(temp.path()));
  }
}

TEST_CASE("random-model's flux-fill-bench preset is `bench edit`'s Flux configuration", "[random_checkpoint]") {
  test::TempDir temp;
  RandomCheckpointRequest request;
  request.preset = small_flux_fill_preset("flux-fill-bench", bench::reference_bench_config());
  request.format = RandomModelFormat::gguf;
  request.quant = "q4_k";
  request.text_encoder_quant = "fp8";
  const RandomCheckpointResult result = write_random_checkpoint(temp.file("bench"), request);
  const auto file = GgufFile::open(temp.file("bench/flux-fill-bench-Q4_K.gguf"));
  CHECK(file->find("double_blocks.3.img_mlp.0.weight")->shape == std::vector<int64_t>{2048, 512});
  CHECK(file->find("single_blocks.7.linear1.weight")->type == GgmlType::Q4_K);
  CHECK(!file->find("double_blocks.4.img_mlp.0.weight"));
  const auto t5 = SafetensorsFile::open(temp.file("bench/t5xxl_fp8_e4m3fn.safetensors"));
  CHECK(t5->find("encoder.block.1.layer.1.DenseReluDense.wi_0.weight")->dtype == DType::F8_E4M3);
  CHECK(result.parameters > 70000000);
}

// The keys and shapes of `fixture`'s single file, written from its folder configs by `preset`'s recipe.
void require_fixture_keys(const fs::path& single_dir, const std::string& file, RandomModelPreset preset,
                          const test::TempDir& temp) {
  RandomCheckpointRequest request;
  request.preset = std::move(preset);
  request.preset.unet_config = read_json_file((single_dir / "unet/config.json").string());
  request.preset.spec.vae_config = read_json_file((single_dir / "vae/config.json").string());
  request.preset.clip_config = read_json_file((single_dir / "text_encoder/config.json").string());
  if (fs::exists(single_dir / "text_encoder_2"))
    request.preset.clip2_config = read_json_file((single_dir / "text_encoder_2/config.json").string());
  request.format = RandomModelFormat::single_file;
  request.quant = "f16";
  write_random_checkpoint(temp.file(file), request);
  const auto written = SafetensorsFile::open(temp.file(file));
  const auto fixture = SafetensorsFile::open((single_dir / file).string());
  size_t matched = 0;
  for (const TensorInfo& info : fixture->tensors()) {
    if (info.name.find("position_ids") != std::string::npos) continue;  // a buffer some files carry
    INFO(info.name);
    const TensorInfo* mine = written->find(info.name);
    REQUIRE(mine != nullptr);
    CHECK(mine->shape == info.shape);
    CHECK(mine->dtype == DType::F16);
    ++matched;
  }
  CHECK(written->tensors().size() == matched);
  const nlohmann::json files = nlohmann::json::parse(written->metadata().at("flashps.files"));
  CHECK(files.contains("unet/config.json"));
}

TEST_CASE("random SD single files have the keys and shapes of diffusers' conversion", "[random_checkpoint][fixtures]") {
  FLASHPS_REQUIRE_FIXTURE(sd_dir, "single_file_sd_inpaint_tiny");
  FLASHPS_REQUIRE_FIXTURE(sdxl_dir, "single_file_sdxl_tiny");
  test::TempDir temp;
  require_fixture_keys(sd_dir, "sd_inpaint_tiny.safetensors", sd15_inpaint_preset(), temp);
  require_fixture_keys(sdxl_dir, "sdxl_tiny.safetensors", sdxl_preset(), temp);

  RandomCheckpointRequest request;
  request.preset = sd15_inpaint_preset();
  request.preset.unet_config = read_json_file((sd_dir / "unet/config.json").string());
  request.preset.spec.vae_config = read_json_file((sd_dir / "vae/config.json").string());
  request.preset.clip_config = read_json_file((sd_dir / "text_encoder/config.json").string());
  request.format = RandomModelFormat::folder;
  write_random_checkpoint(temp.file("sd"), request);
  const auto unet = safetensors_tensors({SafetensorsFile::open(temp.file("sd/unet/diffusion_pytorch_model.safetensors"))});
  CHECK(unet->entries().count("down_blocks.1.attentions.0.transformer_blocks.0.attn2.to_k.weight"));
  CHECK(fs::exists(temp.file("sd/tokenizer/vocab.json")));
  request.format = RandomModelFormat::gguf;
  CHECK_THROWS_WITH(write_random_checkpoint(temp.file("sd-gguf"), request), Catch::Contains("Flux presets only"));
}

namespace {

// Every model key of a component read back through the loader's layout table equals the generated value.
void require_generated(const CheckpointTensors& read, const TensorShapes& shapes, uint64_t seed) {
  REQUIRE(read.entries().size() == shapes.size());
  for (const auto& [key, shape] : shapes) {
    INFO(read.source() << ": " << key);
    REQUIRE(read.entries().count(key));
    CHECK(at::equal(read.read(key), random_weight(key, shape, seed)));
  }
}

std::shared_ptr<const CheckpointTensors> open_file(const std::string& path) {
  return safetensors_tensors({SafetensorsFile::open(path)});
}

}  // namespace

TEST_CASE("random single files and component files load through the loaders' layout tables as generated",
          "[random_checkpoint][fixtures]") {
  test::TempDir temp;
  // Flux all-in-one and split files (float32: the values must come back exactly).
  const RandomCheckpointRequest flux = tiny_request(RandomModelFormat::single_file, "f32");
  write_random_checkpoint(temp.file("flux.safetensors"), flux);
  const auto file = open_file(temp.file("flux.safetensors"));
  const RandomFluxModelSpec& spec = flux.preset.spec;
  const AutoencoderKLConfig vae_config = parse_autoencoder_kl_config(spec.vae_config, "vae");
  const ClipTextConfig clip_config = parse_clip_text_config(flux.preset.clip_config, "clip");
  const T5Config t5_config = T5Config::from_json(flux.preset.t5_config, "t5");
  require_generated(*flux_transformer_tensors(tensors_under_prefix(file, "model.diffusion_model.")),
                    flux_transformer_shapes(spec.transformer), flux.seed);
  require_generated(*autoencoder_tensors(tensors_under_prefix(file, "vae."), vae_config),
                    autoencoder_kl_shapes(spec.vae_config, "vae"), flux.seed + 1);
  require_generated(*clip_text_tensors(tensors_under_prefix(file, "text_encoders.clip_l.transformer."), clip_config),
                    clip_text_shapes(clip_config), flux.seed + 10);
  require_generated(*t5_encoder_tensors(tensors_under_prefix(file, "text_encoders.t5xxl.transformer.")),
                    t5_encoder_shapes(t5_config), flux.seed + 11);

  RandomCheckpointRequest split = tiny_request(RandomModelFormat::gguf, "q8_0");
  split.quant = "f32";
  write_random_checkpoint(temp.file("split"), split);
  require_generated(*autoencoder_tensors(tensors_under_prefix(open_file(temp.file("split/ae.safetensors")), ""), vae_config),
                    autoencoder_kl_shapes(spec.vae_config, "vae"), split.seed + 1);
  require_generated(*clip_text_tensors(tensors_under_prefix(open_file(temp.file("split/clip_l.safetensors")), ""), clip_config),
                    clip_text_shapes(clip_config), split.seed + 10);
  require_generated(*t5_encoder_tensors(tensors_under_prefix(open_file(temp.file("split/t5xxl_fp32.safetensors")), "")),
                    t5_encoder_shapes(t5_config), split.seed + 11);

  // SDXL all-in-one at the fixture's configs: LDM UNet and VAE, HF CLIP, OpenCLIP.
  FLASHPS_REQUIRE_FIXTURE(sdxl_dir, "single_file_sdxl_tiny");
  RandomCheckpointRequest sdxl;
  sdxl.preset = sdxl_preset();
  sdxl.preset.unet_config = read_json_file((sdxl_dir / "unet/config.json").string());
  sdxl.preset.spec.vae_config = read_json_file((sdxl_dir / "vae/config.json").string());
  sdxl.preset.clip_config = read_json_file((sdxl_dir / "text_encoder/config.json").string());
  sdxl.preset.clip2_config = read_json_file((sdxl_dir / "text_encoder_2/config.json").string());
  sdxl.format = RandomModelFormat::single_file;
  sdxl.seed = 9;
  write_random_checkpoint(temp.file("sdxl.safetensors"), sdxl);
  const auto sdxl_file = open_file(temp.file("sdxl.safetensors"));
  const UNetConfig unet_config = parse_unet_config(sdxl.preset.unet_config, "unet");
  const ClipTextConfig clip2_config = parse_clip_text_config(sdxl.preset.clip2_config, "clip2");
  require_generated(*unet_tensors(tensors_under_prefix(sdxl_file, "model.diffusion_model."), unet_config),
                    unet_shapes(sdxl.preset.unet_config, "unet"), sdxl.seed);
  require_generated(*autoencoder_tensors(tensors_under_prefix(sdxl_file, "first_stage_model."),
                                         parse_autoencoder_kl_config(sdxl.preset.spec.vae_config, "vae")),
                    autoencoder_kl_shapes(sdxl.preset.spec.vae_config, "vae"), sdxl.seed + 1);
  const ClipTextConfig sdxl_clip = parse_clip_text_config(sdxl.preset.clip_config, "clip");
  require_generated(*clip_text_tensors(tensors_under_prefix(sdxl_file, "conditioner.embedders.0.transformer."), sdxl_clip),
                    clip_text_shapes(sdxl_clip), sdxl.seed + 10);
  require_generated(*clip_text_tensors(tensors_under_prefix(sdxl_file, "conditioner.embedders.1.model."), clip2_config),
                    clip_text_shapes(clip2_config), sdxl.seed + 12);
}
