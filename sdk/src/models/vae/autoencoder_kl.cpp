#include "models/vae/autoencoder_kl.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "core/diagnostics/error.h"
#include "core/files/safetensors.h"
#include "models/loading/checkpoint_tensors.h"
#include "models/loading/config_checks.h"
#include "models/vae/autoencoder_ldm_layout.h"
#include "models/vae/vae_encoder.h"
#include "models/loading/weights.h"

namespace flashps {
namespace {

std::string describe_shape(const at::Tensor& tensor) {
  std::ostringstream out;
  out << tensor.sizes();
  return out.str();
}

bool is_supported_model_dtype(at::ScalarType dtype) {
  return dtype == at::kFloat || dtype == at::kBFloat16 || dtype == at::kHalf ||
         dtype == at::kDouble;
}

}  // namespace

AutoencoderKL::AutoencoderKL(AutoencoderKLConfig config) : config_(std::move(config)) {
  encoder_ = register_module("encoder", std::make_shared<vae::VaeEncoder>(config_));
  decoder_ = register_module("decoder", std::make_shared<vae::VaeDecoder>(config_));
  const int64_t latent = config_.latent_channels;
  if (config_.use_quant_conv)
    quant_conv_ = register_module("quant_conv",
                                  std::make_shared<Conv2dLayer>(2 * latent, 2 * latent, 1));
  if (config_.use_post_quant_conv)
    post_quant_conv_ =
        register_module("post_quant_conv", std::make_shared<Conv2dLayer>(latent, latent, 1));
  // Shares the parameter's TensorImpl, so it follows dtype changes made by loading or ->to().
  reference_parameter_ = encoder_->named_parameters()["conv_in.weight"];
}

at::ScalarType AutoencoderKL::dtype() const { return reference_parameter_.scalar_type(); }

at::Tensor AutoencoderKL::to_model_input(const at::Tensor& input, int64_t channels,
                                         const char* operation) const {
  if (!input.defined() || input.dim() != 4 || input.size(1) != channels || input.size(2) == 0 ||
      input.size(3) == 0 || !at::isFloatingType(input.scalar_type())) {
    throw Error(std::string("AutoencoderKL.") + operation + ": expected a floating [B, " +
                std::to_string(channels) + ", H, W] tensor, got " +
                (input.defined() ? describe_shape(input) : std::string("an undefined tensor")));
  }
  // Channels-last activations: oneDNN convolutions skip their layout reorders (about 20% less CPU
  // time for a 512x512 SD decode here); GroupNorm, padding and the upsampler keep the format.
  return input.to(reference_parameter_.device(), reference_parameter_.scalar_type())
      .contiguous(at::MemoryFormat::ChannelsLast);
}

at::Tensor AutoencoderKL::encode_moments(const at::Tensor& image) const {
  c10::InferenceMode inference;
  at::Tensor moments = encoder_->forward(to_model_input(image, config_.in_channels, "encode"));
  if (quant_conv_) moments = quant_conv_->forward(moments);
  return moments.contiguous();  // callers get the standard layout
}

at::Tensor AutoencoderKL::encode_mean(const at::Tensor& image) const {
  c10::InferenceMode inference;
  return encode_moments(image).narrow(1, 0, config_.latent_channels).contiguous();
}

at::Tensor AutoencoderKL::decode(const at::Tensor& latent) const {
  c10::InferenceMode inference;
  at::Tensor input = to_model_input(latent, config_.latent_channels, "decode");
  at::Tensor image = decoder_->forward(post_quant_conv_ ? post_quant_conv_->forward(input) : input);
  return image.contiguous();  // callers get the standard layout
}

at::Tensor AutoencoderKL::encode_to_latents(const at::Tensor& image) const {
  c10::InferenceMode inference;
  at::Tensor latents = encode_mean(image).to(at::kFloat);
  if (config_.shift_factor != 0.0) latents.sub_(config_.shift_factor);
  return latents.mul_(config_.scaling_factor);
}

at::Tensor AutoencoderKL::decode_latents(const at::Tensor& latents) const {
  c10::InferenceMode inference;
  at::Tensor raw = latents.to(at::kFloat).div(config_.scaling_factor);
  if (config_.shift_factor != 0.0) raw.add_(config_.shift_factor);
  if (!tiling_) return decode(raw).to(at::kFloat);
  return decode_tiled([this](const at::Tensor& tile) { return decode(tile).to(at::kFloat); }, raw,
                      config_.downscale_factor(), *tiling_);
}

namespace {

// The weights' headers must agree with the config's widths and counts before the model is
// allocated. `source` names the config (beside the weights in a diffusers folder).
void check_config_against_weights(const AutoencoderKLConfig& config, const std::string& source,
                                  const WeightShapes& weights) {
  const std::vector<int64_t>& channels = config.block_out_channels;
  const auto blocks = static_cast<int64_t>(channels.size());
  weights.require_block_count(source, "block_out_channels (entries)", blocks, "encoder.down_blocks");
  weights.require_block_count(source, "block_out_channels (entries)", blocks, "decoder.up_blocks");
  weights.require_shape(source, "in_channels and block_out_channels[0]", "encoder.conv_in.weight",
                        {channels.front(), config.in_channels, 3, 3});
  weights.require_shape(source, "out_channels and block_out_channels[0]", "decoder.conv_out.weight",
                        {config.out_channels, channels.front(), 3, 3});
  weights.require_shape(source, "latent_channels and block_out_channels", "decoder.conv_in.weight",
                        {channels.back(), config.latent_channels, 3, 3});
  for (int64_t i = 0; i < blocks; ++i) {
    const std::string down = "encoder.down_blocks." + std::to_string(i);
    weights.require_block_count(source, "layers_per_block", config.layers_per_block, down + ".resnets");
    weights.require_block_count(source, "layers_per_block (+1 in up blocks)", config.layers_per_block + 1,
                                "decoder.up_blocks." + std::to_string(i) + ".resnets");
    weights.require_shape(source, "block_out_channels", down + ".resnets.0.conv1.weight",
                          {channels[i], channels[std::max<int64_t>(i - 1, 0)], 3, 3});
  }
}

}  // namespace

std::shared_ptr<AutoencoderKL> load_autoencoder_kl(const AutoencoderKLConfig& config,
                                                   const std::string& weights_path,
                                                   at::ScalarType dtype) {
  if (!std::filesystem::is_regular_file(weights_path))
    throw Error(weights_path + ": AutoencoderKL weights file not found");
  const std::string config_source = (std::filesystem::path(weights_path).parent_path() / "config.json").string();
  return load_autoencoder_kl(*safetensors_tensors({SafetensorsFile::open(weights_path)}), config, config_source, dtype);
}

std::shared_ptr<AutoencoderKL> load_autoencoder_kl(const CheckpointTensors& weights, const AutoencoderKLConfig& config,
                                                   const std::string& config_source, at::ScalarType dtype,
                                                   const WeightLoadOptions& base_options) {
  if (!is_supported_model_dtype(dtype))
    throw Error(weights.source() + ": AutoencoderKL cannot run in dtype " + c10::toString(dtype));
  check_config_against_weights(config, config_source, WeightShapes(weights));
  auto model = std::make_shared<AutoencoderKL>(config);
  WeightLoadOptions options = base_options;
  options.dtype = dtype;
  load_weights_strict(*model, weights, options);
  model->eval();
  return model;
}

std::unique_ptr<CheckpointTensors> autoencoder_tensors(std::unique_ptr<CheckpointTensors> stored,
                                                       const AutoencoderKLConfig& config) {
  if (!has_ldm_autoencoder_keys(*stored)) return stored;  // diffusers keys (or not a VAE: the loader names the keys)
  KeyLayout layout = autoencoder_ldm_layout(*stored, config);
  return tensors_in_layout(std::move(stored), std::move(layout), "latent-diffusion (LDM) autoencoder");
}

std::shared_ptr<AutoencoderKL> load_autoencoder_kl(const std::string& model_dir,
                                                   at::ScalarType dtype) {
  namespace fs = std::filesystem;
  const fs::path dir(model_dir);
  const fs::path config_path = dir / "config.json";
  if (!fs::is_regular_file(config_path))
    throw Error(model_dir + ": no config.json (expected a diffusers AutoencoderKL folder)");
  AutoencoderKLConfig config = read_autoencoder_kl_config(config_path.string());
  // Prefer the full-precision file; fp16-only folders (a diffusers "variant") work too.
  for (const char* name :
       {"diffusion_pytorch_model.safetensors", "diffusion_pytorch_model.fp16.safetensors"}) {
    if (fs::is_regular_file(dir / name))
      return load_autoencoder_kl(config, (dir / name).string(), dtype);
  }
  throw Error(model_dir +
              ": no diffusion_pytorch_model.safetensors (AutoencoderKL weights; .bin checkpoints "
              "are not supported, convert them to safetensors)");
}

}  // namespace flashps
