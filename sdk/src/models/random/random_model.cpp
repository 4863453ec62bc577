#include "models/random/random_model.h"

#include <ATen/ATen.h>

#include <filesystem>
#include <fstream>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "core/files/tensor_io.h"
#include "schedulers/flow_match_euler_discrete.h"
#include "models/flux/flux_transformer.h"
#include "models/random/random_text_encoders.h"
#include "models/random/random_weights.h"
#include "models/vae/autoencoder_kl.h"

namespace flashps {
namespace {


void save_module(const std::filesystem::path& path, torch::nn::Module& module) {
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  for (const auto& item : module.named_parameters(true)) tensors.emplace_back(item.key(), item.value());
  save_safetensors(path.string(), tensors, {{"format", "pt"}});
}

}  // namespace

RandomFluxModelSpec small_fill_model_spec() {
  RandomFluxModelSpec spec;
  FluxConfig& config = spec.transformer;
  config.out_channels = 64;  // 16 latent channels x 2x2 patch
  config.in_channels = 64 + 64 + 64 * 4;  // latents + masked-image latents + 8x8 mask packed
  config.num_layers = 2;
  config.num_single_layers = 4;
  config.attention_head_dim = 64;
  config.num_attention_heads = 4;
  config.joint_attention_dim = 128;
  config.pooled_projection_dim = 64;
  config.axes_dims_rope = {8, 28, 28};
  spec.vae_config = {{"_class_name", "AutoencoderKL"},
                     {"in_channels", 3},
                     {"out_channels", 3},
                     {"block_out_channels", {16, 32, 32, 32}},
                     {"down_block_types", std::vector<std::string>(4, "DownEncoderBlock2D")},
                     {"up_block_types", std::vector<std::string>(4, "UpDecoderBlock2D")},
                     {"layers_per_block", 1},
                     {"latent_channels", 16},
                     {"norm_num_groups", 8},
                     {"scaling_factor", 0.3611},
                     {"shift_factor", 0.1159},
                     {"use_quant_conv", false},
                     {"use_post_quant_conv", false},
                     {"sample_size", 256}};
  spec.scheduler_config = flux_scheduler_config();
  return spec;
}

void write_random_flux_model(const std::string& dir, const RandomFluxModelSpec& spec) {
  namespace fs = std::filesystem;
  for (const char* component : {"transformer", "vae", "scheduler"}) fs::create_directories(fs::path(dir) / component);
  at::NoGradGuard no_grad;

  FluxTransformer transformer(spec.transformer);
  fill_random_weights(*transformer, spec.seed);
  write_json_file((fs::path(dir) / "transformer" / "config.json").string(), spec.transformer.to_json());
  save_module(fs::path(dir) / "transformer" / "diffusion_pytorch_model.safetensors", *transformer);

  write_json_file((fs::path(dir) / "vae" / "config.json").string(), spec.vae_config);
  if (spec.vae_config.value("_class_name", std::string()) == "AutoencoderKL") {
    AutoencoderKLConfig vae_config = parse_autoencoder_kl_config(spec.vae_config, dir + "/vae/config.json");
    AutoencoderKL vae(vae_config);
    fill_random_weights(vae, spec.seed + 1);
    save_module(fs::path(dir) / "vae" / "diffusion_pytorch_model.safetensors", vae);
  }

  write_json_file((fs::path(dir) / "scheduler" / "scheduler_config.json").string(), spec.scheduler_config);

  auto generator = at::detail::createCPUGenerator(spec.seed + 2);
  save_safetensors((fs::path(dir) / "empty_prompt_embeds.safetensors").string(),
                   {{"prompt_embeds", at::randn({spec.text_tokens, spec.transformer.joint_attention_dim}, generator)},
                    {"pooled_prompt_embeds", at::randn({spec.transformer.pooled_projection_dim}, generator)}});
  nlohmann::json index = {{"_class_name", "FluxFillPipeline"},
                          {"_flashps_note", "random weights: for tests and benchmarks, not for real edits"},
                          {"transformer", {"diffusers", "FluxTransformer2DModel"}},
                          {"vae", {"diffusers", spec.vae_config.value("_class_name", std::string("AutoencoderKL"))}},
                          {"scheduler", {"diffusers", "FlowMatchEulerDiscreteScheduler"}}};
  if (spec.text_encoders) {
    RandomFluxTextEncodersSpec text;
    text.clip_hidden_size = spec.transformer.pooled_projection_dim;
    text.t5_d_model = spec.transformer.joint_attention_dim;
    text.seed = spec.seed;
    write_random_flux_text_encoders(dir, text);
    index["text_encoder"] = {"transformers", "CLIPTextModel"};
    index["tokenizer"] = {"transformers", "CLIPTokenizer"};
    index["text_encoder_2"] = {"transformers", "T5EncoderModel"};
    index["tokenizer_2"] = {"transformers", "T5TokenizerFast"};
    index["_flashps_max_sequence_length"] = spec.max_sequence_length;
  }
  write_json_file((fs::path(dir) / "model_index.json").string(), index);
}

}  // namespace flashps
