#include "models/random/random_checkpoint.h"

#include <ATen/ATen.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/files/scratch_folder.h"
#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "models/clip/clip_text_model.h"
#include "models/loading/layout_writer.h"
#include "models/random/random_layouts.h"
#include "models/random/random_tensor_types.h"
#include "models/random/random_tensors.h"
#include "models/random/random_text_encoders.h"
#include "models/random/streamed_tensor_file.h"
#include "models/t5/t5_config.h"

namespace flashps {
namespace {

namespace fs = std::filesystem;
using Format = StreamedTensorFile::Format;

struct RandomComponent {
  std::string name;  // its folder in the diffusers layout
  uint64_t seed = 0;
  TensorShapes shapes;
};

struct PlannedRandomTensor {
  std::string name;  // as stored in the file
  StoredTensorRecipe recipe;
  const RandomComponent* component = nullptr;
  TensorEncoding encoding = TensorEncoding::F32;
};

KeyLayout identity_key_layout(const TensorShapes& shapes) {
  KeyLayout layout;
  for (const auto& [key, shape] : shapes) layout[key] = KeyPiece{key};
  return layout;
}

void plan_component(std::vector<PlannedRandomTensor>& plan, const RandomComponent& component, const KeyLayout& layout,
                    const std::string& layout_name, const std::string& prefix, const EncodingChoice& encoding) {
  for (StoredTensorRecipe& recipe : stored_tensor_recipes(layout, component.shapes, layout_name)) {
    PlannedRandomTensor tensor;
    tensor.name = prefix + recipe.stored_key;
    tensor.encoding = encoding(recipe.stored_key, recipe.stored_shape);
    tensor.recipe = std::move(recipe);
    tensor.component = &component;
    plan.push_back(std::move(tensor));
  }
}

// Writes one file of `plan` (plus `extra` tensors, already computed, stored F32).
class PlannedFileWriter {
 public:
  PlannedFileWriter(const RandomCheckpointRequest& request, RandomCheckpointResult& result)
      : request_(request), result_(result) {}

  void write(const std::string& path, Format format, const std::vector<PlannedRandomTensor>& plan,
             const std::map<std::string, std::string>& strings, const std::map<std::string, uint32_t>& numbers,
             const std::vector<std::pair<std::string, at::Tensor>>& extra = {}) {
    StreamedTensorFile file(path, format);
    for (const auto& [key, value] : numbers) file.set_uint32(key, value);
    for (const auto& [key, value] : strings) file.set_string(key, value);
    for (const PlannedRandomTensor& tensor : plan) file.declare(tensor.name, tensor.recipe.stored_shape, tensor.encoding);
    for (const auto& [name, values] : extra) file.declare(name, values.sizes().vec(), TensorEncoding::F32);
    const double total_gb = double(file.planned_bytes()) / 1e9;
    file.begin();
    if (request_.progress) {
      std::ostringstream line;
      line.precision(3);
      line << "writing " << fs::path(path).filename().string() << ": " << plan.size() + extra.size() << " tensors, "
           << total_gb << " GB";
      request_.progress(line.str());
    }
    auto last = std::chrono::steady_clock::now();
    for (size_t i = 0; i < plan.size(); ++i) {
      if (request_.cancel && request_.cancel->load()) throw Cancelled();
      const PlannedRandomTensor& tensor = plan[i];
      const RandomComponent& component = *tensor.component;
      const at::Tensor values = stored_tensor_from_model(tensor.recipe, [&component](const std::string& key) {
        return random_weight(key, component.shapes.at(key), component.seed);
      });
      file.write_next(tensor.name, values);
      const auto now = std::chrono::steady_clock::now();
      if (request_.progress && now - last > std::chrono::seconds(2)) {
        last = now;
        std::ostringstream line;
        line.precision(3);
        line << fs::path(path).filename().string() << ": " << i + 1 << "/" << plan.size() << " tensors of "
             << total_gb << " GB";
        request_.progress(line.str());
      }
    }
    for (const auto& [name, values] : extra) file.write_next(name, values);
    file.finish();
    result_.files.push_back(path);
    result_.bytes += fs::file_size(path);
    if (request_.progress) request_.progress("wrote " + fs::path(path).filename().string());
  }

 private:
  const RandomCheckpointRequest& request_;
  RandomCheckpointResult& result_;
};

std::string read_small_file(const fs::path& path) {
  std::ifstream stream(path, std::ios::binary);
  std::ostringstream text;
  text << stream.rdbuf();
  return text.str();
}

std::string base64_text(const std::string& bytes) {
  static const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t group = uint32_t(uint8_t(bytes[i])) << 16;
    if (i + 1 < bytes.size()) group |= uint32_t(uint8_t(bytes[i + 1])) << 8;
    if (i + 2 < bytes.size()) group |= uint32_t(uint8_t(bytes[i + 2]));
    for (int k = 0; k < 4; ++k)
      out += i * 8 + 6 * k < bytes.size() * 8 ? digits[(group >> (18 - 6 * k)) & 0x3F] : '=';
  }
  return out;
}

// A folder `out` staged as "<out>.partial": renamed into place when complete, removed otherwise.
class StagedFolder {
 public:
  explicit StagedFolder(const std::string& out) : out_(out), staging_(out + ".partial") {
    fs::remove_all(staging_);
    fs::create_directories(staging_);
  }
  ~StagedFolder() {
    std::error_code ignored;
    if (!done_) fs::remove_all(staging_, ignored);
  }
  fs::path path(const std::string& relative) const { return fs::path(staging_) / relative; }
  void commit(RandomCheckpointResult& result) {
    fs::rename(staging_, out_);
    done_ = true;
    for (std::string& file : result.files) file = out_ + file.substr(staging_.size());
  }

 private:
  std::string out_, staging_;
  bool done_ = false;
};

std::vector<std::pair<std::string, at::Tensor>> random_empty_prompt_tensors(const RandomFluxModelSpec& spec, uint64_t seed,
                                                                     const std::string& prefix) {
  auto generator = at::detail::createCPUGenerator(seed + 2);
  at::Tensor prompt = at::randn({spec.text_tokens, spec.transformer.joint_attention_dim}, generator);
  at::Tensor pooled = at::randn({spec.transformer.pooled_projection_dim}, generator);
  return {{prefix + "pooled_prompt_embeds", pooled}, {prefix + "prompt_embeds", prompt}};
}

void write_small_files(const StagedFolder& folder, const std::map<std::string, std::string>& files) {
  for (const auto& [path, content] : files) {
    fs::create_directories(folder.path(path).parent_path());
    std::ofstream(folder.path(path), std::ios::binary) << content;
  }
}

// Stable Diffusion: a diffusers folder, or one .safetensors in the original layout
// (model.diffusion_model.*, first_stage_model.*, cond_stage_model.transformer.*).
void write_sd_checkpoint(const std::string& out, const RandomCheckpointRequest& request, RandomCheckpointResult& result,
                         const std::map<std::string, std::string>& small_files) {
  const RandomModelPreset& preset = request.preset;
  if (request.format == RandomModelFormat::gguf)
    throw InvalidArgumentError("--format gguf: written for the Flux presets only (" + preset.name + " is Stable Diffusion)");
  const EncodingChoice unet_choice = random_float_choice(request.quant, "--quant");
  const EncodingChoice small_choice = random_float_choice(request.quant == "f32" ? "f32" : "f16", "--quant");
  if (request.progress) request.progress("planning " + preset.name + " (tensor shapes)");
  RandomComponent unet{"unet", request.seed, unet_shapes(preset.unet_config, preset.name + " unet config")};
  RandomComponent vae{"vae", request.seed + 1, autoencoder_kl_shapes(preset.spec.vae_config, preset.name + " vae config")};
  RandomComponent clip{"text_encoder", request.seed + 10,
                       clip_text_shapes(parse_clip_text_config(preset.clip_config, preset.name + " text_encoder config"))};
  const bool xl = !preset.clip2_config.is_null();
  RandomComponent clip2{"text_encoder_2", request.seed + 12,
                        xl ? clip_text_shapes(parse_clip_text_config(preset.clip2_config, preset.name + " text_encoder_2 config"))
                           : TensorShapes{}};
  for (const RandomComponent* component : {&unet, &vae, &clip, &clip2}) result.parameters += parameter_count(component->shapes);
  PlannedFileWriter writer(request, result);
  if (request.format == RandomModelFormat::folder) {
    StagedFolder folder(out);
    write_small_files(folder, small_files);
    const std::tuple<const RandomComponent*, std::string, const EncodingChoice*> weights[] = {
        {&unet, "unet/diffusion_pytorch_model.safetensors", &unet_choice},
        {&vae, "vae/diffusion_pytorch_model.safetensors", &small_choice},
        {&clip, "text_encoder/model.safetensors", &small_choice},
        {&clip2, "text_encoder_2/model.safetensors", &small_choice}};
    for (const auto& [component, file, choice] : weights) {
      if (component->shapes.empty()) continue;  // no second text encoder (SD 1.x)
      std::vector<PlannedRandomTensor> plan;
      plan_component(plan, *component, identity_key_layout(component->shapes), component->name, "", *choice);
      writer.write(folder.path(file).string(), Format::safetensors, plan, {{"format", "pt"}}, {});
    }
    folder.commit(result);
    return;
  }
  std::vector<PlannedRandomTensor> plan;
  plan_component(plan, unet, unet_ldm_layout_for_writing(unet.shapes), "LDM UNet", "model.diffusion_model.", unet_choice);
  plan_component(plan, vae,
                 autoencoder_ldm_layout_for_writing(vae.shapes, int64_t(preset.spec.vae_config.at("block_out_channels").size())),
                 "LDM autoencoder", "first_stage_model.", small_choice);
  if (xl) {
    plan_component(plan, clip, identity_key_layout(clip.shapes), "CLIP", "conditioner.embedders.0.transformer.", small_choice);
    plan_component(plan, clip2, open_clip_layout_for_writing(clip2.shapes), "OpenCLIP", "conditioner.embedders.1.model.",
                   small_choice);
  } else {
    plan_component(plan, clip, identity_key_layout(clip.shapes), "CLIP", "cond_stage_model.transformer.", small_choice);
  }
  writer.write(out, Format::safetensors, plan, {{"flashps.files", flashps_files_metadata(small_files)}, {"format", "pt"}}, {});
}

}  // namespace

RandomModelFormat random_model_format(const std::string& name) {
  if (name == "folder") return RandomModelFormat::folder;
  if (name == "single-file") return RandomModelFormat::single_file;
  if (name == "gguf") return RandomModelFormat::gguf;
  throw InvalidArgumentError("--format: '" + name + "' is none of folder, single-file, gguf");
}

std::map<std::string, std::string> random_model_small_files(const RandomModelPreset& preset) {
  const RandomFluxModelSpec& spec = preset.spec;
  std::map<std::string, std::string> files;
  {
    const ScratchFolder staging("the random model's tokenizer files");
    write_byte_level_clip_tokenizer(staging.path());  // random_text_encoders.h writes it as files: read them back
    for (const char* name : {"vocab.json", "merges.txt"})
      files[std::string("tokenizer/") + name] = read_small_file(fs::path(staging.path()) / name);
  }
  files["vae/config.json"] = spec.vae_config.dump(2);
  files["scheduler/scheduler_config.json"] = spec.scheduler_config.dump(2);
  files["text_encoder/config.json"] = preset.clip_config.dump(2);
  if (preset.family == "sd") {
    files["unet/config.json"] = preset.unet_config.dump(2);
    const bool inpaint = preset.unet_config.value("in_channels", 4) == 9, xl = !preset.clip2_config.is_null();
    const std::string pipeline = std::string(xl ? "StableDiffusionXL" : "StableDiffusion") + (inpaint ? "InpaintPipeline" : "Pipeline");
    nlohmann::json index = {
        {"_class_name", pipeline},
        {"_flashps_note", "random weights: for tests and benchmarks, not for real edits"},
        {"_flashps_preset", preset.name},
        {"unet", {"diffusers", "UNet2DConditionModel"}},
        {"vae", {"diffusers", "AutoencoderKL"}},
        {"text_encoder", {"transformers", "CLIPTextModel"}},
        {"tokenizer", {"transformers", "CLIPTokenizer"}},
        {"scheduler", {"diffusers", preset.spec.scheduler_config.value("_class_name", std::string("PNDMScheduler"))}}};
    if (xl) {
      index["text_encoder_2"] = {"transformers", "CLIPTextModelWithProjection"};
      index["tokenizer_2"] = {"transformers", "CLIPTokenizer"};
      files["text_encoder_2/config.json"] = preset.clip2_config.dump(2);
      files["tokenizer_2/vocab.json"] = files["tokenizer/vocab.json"];
      files["tokenizer_2/merges.txt"] = files["tokenizer/merges.txt"];
    }
    files["model_index.json"] = index.dump(2);
    return files;
  }
  files["transformer/config.json"] = spec.transformer.to_json().dump(2);
  files["text_encoder_2/config.json"] = preset.t5_config.dump(2);
  files["tokenizer_2/spiece.model"] = character_level_spiece_model();
  files["tokenizer_2/special_tokens_map.json"] =
      nlohmann::json({{"eos_token", "</s>"}, {"pad_token", "<pad>"}, {"unk_token", "<unk>"}}).dump(2);
  const nlohmann::json index = {{"_class_name", "FluxFillPipeline"},
                                {"_flashps_note", "random weights: for tests and benchmarks, not for real edits"},
                                {"_flashps_preset", preset.name},
                                {"transformer", {"diffusers", "FluxTransformer2DModel"}},
                                {"vae", {"diffusers", "AutoencoderKL"}},
                                {"scheduler", {"diffusers", "FlowMatchEulerDiscreteScheduler"}},
                                {"text_encoder", {"transformers", "CLIPTextModel"}},
                                {"tokenizer", {"transformers", "CLIPTokenizer"}},
                                {"text_encoder_2", {"transformers", "T5EncoderModel"}},
                                {"tokenizer_2", {"transformers", "T5TokenizerFast"}},
                                {"_flashps_max_sequence_length", spec.max_sequence_length}};
  files["model_index.json"] = index.dump(2);
  return files;
}

std::string flashps_files_metadata(const std::map<std::string, std::string>& files) {
  nlohmann::json json = nlohmann::json::object();
  for (const auto& [path, content] : files) {
    const bool binary = path.size() > 6 && path.compare(path.size() - 6, 6, ".model") == 0;
    json[path] = binary ? "base64:" + base64_text(content) : content;
  }
  return json.dump();
}

RandomCheckpointResult write_random_checkpoint(const std::string& out, const RandomCheckpointRequest& request) {
  if (out.empty()) throw InvalidArgumentError("random-model: give the output path");
  if (fs::exists(out)) throw InvalidArgumentError(out + " already exists; give a new path");
  const RandomModelPreset& preset = request.preset;
  if (request.format == RandomModelFormat::single_file && fs::path(out).extension() != ".safetensors")
    throw InvalidArgumentError("--format single-file: the output must be a .safetensors file, not " + out);
  if (preset.family == "sd") {
    RandomCheckpointResult result;
    write_sd_checkpoint(out, request, result, random_model_small_files(preset));
    return result;
  }
  const RandomFluxModelSpec& spec = preset.spec;
  const bool gguf = request.format == RandomModelFormat::gguf;
  const bool f32 = request.quant == "f32";
  const std::string text_quant = !request.text_encoder_quant.empty() ? request.text_encoder_quant : f32 ? "f32" : "f16";
  const EncodingChoice t5_choice = random_float_choice(text_quant, "--text-encoder-quant");
  const EncodingChoice small_choice = random_float_choice(f32 ? "f32" : "f16", "--quant");
  const EncodingChoice transformer_choice =
      gguf ? comfyui_gguf_choice(random_ggml_encoding(request.quant)) : random_float_choice(request.quant, "--quant");
  auto progress = [&request](const std::string& line) {
    if (request.progress) request.progress(line);
  };
  progress("planning " + preset.name + " (tensor shapes)");
  RandomComponent transformer{"transformer", request.seed, flux_transformer_shapes(spec.transformer)};
  RandomComponent vae{"vae", request.seed + 1, autoencoder_kl_shapes(spec.vae_config, preset.name + " vae config")};
  RandomComponent clip{"text_encoder", request.seed + 10,
                 clip_text_shapes(parse_clip_text_config(preset.clip_config, preset.name + " text_encoder config"))};
  RandomComponent t5{"text_encoder_2", request.seed + 11,
               t5_encoder_shapes(T5Config::from_json(preset.t5_config, preset.name + " text_encoder_2 config"))};
  RandomCheckpointResult result;
  for (const RandomComponent* component : {&transformer, &vae, &clip, &t5}) result.parameters += parameter_count(component->shapes);

  const std::map<std::string, std::string> small_files = random_model_small_files(preset);
  const std::map<std::string, std::string> carried = {{"flashps.files", flashps_files_metadata(small_files)},
                                                      {"format", "pt"}};
  PlannedFileWriter writer(request, result);
  const KeyLayout bfl = flux_bfl_layout_for_writing(spec.transformer, transformer.shapes);

  if (request.format == RandomModelFormat::folder) {
    StagedFolder folder(out);
    write_small_files(folder, small_files);
    const std::pair<const RandomComponent*, std::string> weights[] = {
        {&transformer, "transformer/diffusion_pytorch_model.safetensors"},
        {&vae, "vae/diffusion_pytorch_model.safetensors"},
        {&clip, "text_encoder/model.safetensors"},
        {&t5, "text_encoder_2/model.safetensors"}};
    for (const auto& [component, file] : weights) {
      std::vector<PlannedRandomTensor> plan;
      const EncodingChoice& choice = component == &transformer ? transformer_choice
                                     : component == &t5        ? t5_choice
                                                               : small_choice;
      plan_component(plan, *component, identity_key_layout(component->shapes), component->name, "", choice);
      writer.write(folder.path(file).string(), Format::safetensors, plan, {{"format", "pt"}}, {});
    }
    writer.write(folder.path("empty_prompt_embeds.safetensors").string(), Format::safetensors, {}, {}, {},
                 random_empty_prompt_tensors(spec, request.seed, ""));
    folder.commit(result);
    return result;
  }

  const KeyLayout vae_layout = autoencoder_ldm_layout_for_writing(
      vae.shapes, int64_t(spec.vae_config.at("block_out_channels").size()));
  if (request.format == RandomModelFormat::single_file) {
    std::vector<PlannedRandomTensor> plan;
    plan_component(plan, transformer, bfl, "Black Forest Labs Flux", "model.diffusion_model.", transformer_choice);
    plan_component(plan, vae, vae_layout, "LDM autoencoder", "vae.", small_choice);
    plan_component(plan, clip, identity_key_layout(clip.shapes), "CLIP", "text_encoders.clip_l.transformer.", small_choice);
    plan_component(plan, t5, identity_key_layout(t5.shapes), "T5", "text_encoders.t5xxl.transformer.", t5_choice);
    writer.write(out, Format::safetensors, plan, carried, {}, random_empty_prompt_tensors(spec, request.seed, "flashps.empty_prompt."));
    return result;
  }

  StagedFolder folder(out);
  std::string quant_name = tensor_encoding_name(random_ggml_encoding(request.quant));
  {
    std::vector<PlannedRandomTensor> plan;
    plan_component(plan, transformer, bfl, "Black Forest Labs Flux", "", transformer_choice);
    writer.write(folder.path(preset.file_stem + "-" + quant_name + ".gguf").string(), Format::gguf, plan,
                 {{"general.architecture", "flux"}, {"flashps.files", carried.at("flashps.files")}},
                 {{"general.quantization_version", 2}, {"general.file_type", llama_file_type(random_ggml_encoding(request.quant))}},
                 random_empty_prompt_tensors(spec, request.seed, "flashps.empty_prompt."));
  }
  const std::string t5_name = text_quant == "f32"    ? "t5xxl_fp32"
                              : text_quant == "bf16" ? "t5xxl_bf16"
                              : text_quant == "fp8"  ? "t5xxl_fp8_e4m3fn"
                                                     : "t5xxl_fp16";
  const std::tuple<const RandomComponent*, const KeyLayout*, std::string, const EncodingChoice*> parts[] = {
      {&vae, &vae_layout, "ae.safetensors", &small_choice},
      {&clip, nullptr, "clip_l.safetensors", &small_choice},
      {&t5, nullptr, t5_name + ".safetensors", &t5_choice}};
  for (const auto& [component, layout, file, choice] : parts) {
    std::vector<PlannedRandomTensor> plan;
    plan_component(plan, *component, layout ? *layout : identity_key_layout(component->shapes), component->name, "", *choice);
    writer.write(folder.path(file).string(), Format::safetensors, plan, carried, {});
  }
  folder.commit(result);
  return result;
}

}  // namespace flashps
