#include "training/fill_model_spec.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <filesystem>
#include <fstream>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "core/files/tensor_io.h"
#include "schedulers/flow_match_euler_discrete.h"

namespace flashps::training {

nlohmann::json FillModelSpec::to_json() const {
  return {{"transformer", transformer.to_json()},
          {"vae", {{"patch_size", autoencoder.patch_size}, {"latent_channels", autoencoder.channels()}}},
          {"scheduler", scheduler_config},
          {"text_tokens", text_tokens},
          {"native_size", native_size},
          {"prediction_type", prediction_type},
          {"masked_image_fill", masked_image_fill}};
}

FillModelSpec small_fill_spec() {
  FillModelSpec spec;
  spec.autoencoder.patch_size = 4;
  spec.autoencoder.in_channels = 3;
  spec.autoencoder.latent_channels = 16;  // as many as Flux's VAE; 38.7 dB PSNR on the photos
  // Tokens are 2x2 patches: the decoder smooths small steps at their borders (MODEL_CARD.md).
  spec.autoencoder.deblocking.block = 2 * spec.autoencoder.patch_size;
  const int64_t latent_channels = spec.autoencoder.latent_channels;
  FluxConfig& config = spec.transformer;
  config.out_channels = latent_channels * 4;
  config.in_channels = 2 * config.out_channels + 4 * 4 * 4;  // + packed 4x4 mask blocks
  config.num_layers = 2;
  config.num_single_layers = 4;
  config.attention_head_dim = 64;
  config.num_attention_heads = 4;
  config.joint_attention_dim = 64;
  config.pooled_projection_dim = 64;
  config.axes_dims_rope = {8, 28, 28};
  config.guidance_embeds = false;
  spec.scheduler_config = flux_scheduler_config();
  return spec;
}

void write_patch_autoencoder(const std::string& dir, const PatchAutoencoder& autoencoder) {
  std::filesystem::create_directories(dir);
  write_json_file((std::filesystem::path(dir) / "config.json").string(), autoencoder.config().to_json());
  if (autoencoder.config().projected())
    save_safetensors((std::filesystem::path(dir) / "diffusion_pytorch_model.safetensors").string(),
                     {{"projection", autoencoder.projection()}, {"mean", autoencoder.mean()}}, {{"format", "pt"}});
}

void write_fill_model(const std::string& dir, const FillModelSpec& spec, const PatchAutoencoder& autoencoder,
                      torch::nn::Module& transformer,
                      const at::Tensor& prompt_embeds, const at::Tensor& pooled_prompt_embeds,
                      at::ScalarType weights_dtype, const nlohmann::json& notes) {
  namespace fs = std::filesystem;
  for (const char* component : {"transformer", "vae", "scheduler"}) fs::create_directories(fs::path(dir) / component);
  at::NoGradGuard no_grad;
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  for (const auto& item : transformer.named_parameters(true))
    tensors.emplace_back(item.key(), item.value().detach().to(weights_dtype).contiguous());
  save_safetensors((fs::path(dir) / "transformer" / "diffusion_pytorch_model.safetensors").string(), tensors,
                   {{"format", "pt"}});
  write_json_file((fs::path(dir) / "transformer" / "config.json").string(), spec.transformer.to_json());
  // The spec's deblocking is a decoder setting: the fitted or loaded autoencoder may lack it.
  PatchAutoencoderConfig shipped = autoencoder.config();
  if (spec.autoencoder.deblocking.enabled()) shipped.deblocking = spec.autoencoder.deblocking;
  write_patch_autoencoder((fs::path(dir) / "vae").string(),
                          PatchAutoencoder(shipped, autoencoder.projection(), autoencoder.mean()));
  write_json_file((fs::path(dir) / "scheduler" / "scheduler_config.json").string(), spec.scheduler_config);
  save_safetensors((fs::path(dir) / "empty_prompt_embeds.safetensors").string(),
                   {{"prompt_embeds", prompt_embeds.detach().to(at::kFloat).contiguous()},
                    {"pooled_prompt_embeds", pooled_prompt_embeds.detach().to(at::kFloat).contiguous()}});
  nlohmann::json index = {{"_class_name", "FluxFillPipeline"},
                          {"transformer", {"diffusers", "FluxTransformer2DModel"}},
                          {"vae", {"flashps", "FlashPSPatchAutoencoder"}},
                          {"scheduler", {"diffusers", "FlowMatchEulerDiscreteScheduler"}},
                          {"text_encoder", nullptr},
                          {"_flashps_unconditional", true},
                          {"_flashps_native_size", spec.native_size},
                          {"_flashps_prediction_type", spec.prediction_type}};
  if (spec.masked_image_fill != "neutral") index["_flashps_masked_image_fill"] = spec.masked_image_fill;
  if (!notes.is_null()) index["_flashps_training"] = notes;
  write_json_file((fs::path(dir) / "model_index.json").string(), index);
}

}  // namespace flashps::training
