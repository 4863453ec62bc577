#include "models/vae/patch_autoencoder.h"

#include <ATen/ATen.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "core/files/safetensors.h"
#include "core/files/tensor_io.h"
#include "models/loading/checkpoint_tensors.h"

namespace flashps {

nlohmann::json PatchAutoencoderConfig::to_json() const {
  nlohmann::json json = {{"_class_name", "FlashPSPatchAutoencoder"},
                         {"patch_size", patch_size},
                         {"in_channels", in_channels},
                         {"latent_channels", channels()},
                         {"scaling_factor", scaling_factor},
                         {"shift_factor", shift_factor}};
  if (deblocking.enabled())
    json["deblocking"] = {{"block", deblocking.block},
                          {"edge_threshold", deblocking.edge_threshold},
                          {"flatness_threshold", deblocking.flatness_threshold}};
  return json;
}

PatchAutoencoderConfig parse_patch_autoencoder_config(const nlohmann::json& json, const std::string& source) {
  PatchAutoencoderConfig config;
  try {
    config.patch_size = json.value("patch_size", config.patch_size);
    config.in_channels = json.value("in_channels", config.in_channels);
    config.latent_channels = json.value("latent_channels", config.latent_channels);
    config.scaling_factor = json.value("scaling_factor", config.scaling_factor);
    config.shift_factor = json.value("shift_factor", config.shift_factor);
    if (json.contains("deblocking")) {
      const nlohmann::json& deblocking = json.at("deblocking");
      if (!deblocking.is_object()) throw Error(source + ": deblocking must be an object");
      config.deblocking.block = deblocking.value("block", int64_t{8});
      config.deblocking.edge_threshold = deblocking.value("edge_threshold", config.deblocking.edge_threshold);
      config.deblocking.flatness_threshold = deblocking.value("flatness_threshold", config.deblocking.flatness_threshold);
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(source + ": " + e.what());
  }
  if (config.patch_size < 1 || config.patch_size > 64)
    throw Error(source + ": patch_size must be between 1 and 64, got " + std::to_string(config.patch_size));
  if (config.in_channels < 1 || config.in_channels > 4)
    throw Error(source + ": in_channels must be between 1 and 4, got " + std::to_string(config.in_channels));
  if (config.latent_channels < 0 || config.latent_channels > config.patch_values())
    throw Error(source + ": latent_channels must be between 1 and " + std::to_string(config.patch_values()));
  if (!(config.scaling_factor > 0) || !std::isfinite(config.scaling_factor))
    throw Error(source + ": scaling_factor must be a positive number");
  if (!std::isfinite(config.shift_factor)) throw Error(source + ": shift_factor must be finite");
  const DeblockingFilter& deblocking = config.deblocking;
  if (deblocking.block != 0 && (deblocking.block < 4 || deblocking.block % 2 != 0 || deblocking.block > 256))
    throw Error(source + ": deblocking.block must be 0 (off) or an even number from 4 to 256, got " +
                std::to_string(deblocking.block));
  if (!(deblocking.edge_threshold >= 0) || !std::isfinite(deblocking.edge_threshold) ||
      !(deblocking.flatness_threshold >= 0) || !std::isfinite(deblocking.flatness_threshold))
    throw Error(source + ": deblocking thresholds must be finite and not negative");
  return config;
}

PatchAutoencoder::PatchAutoencoder(PatchAutoencoderConfig config, at::Tensor projection, at::Tensor mean)
    : config_(config) {
  if (!config_.projected()) {
    if (projection.defined()) throw Error("patch autoencoder: a projection was given but latent_channels is 3*p*p");
    return;
  }
  if (!projection.defined() || !mean.defined() || projection.dim() != 2 ||
      projection.size(0) != config_.channels() || projection.size(1) != config_.patch_values() ||
      mean.dim() != 1 || mean.size(0) != config_.patch_values())
    throw Error("patch autoencoder: expected projection [" + std::to_string(config_.channels()) + ", " +
                std::to_string(config_.patch_values()) + "] and mean [" + std::to_string(config_.patch_values()) + "]");
  projection_ = projection.to(at::kFloat).contiguous();
  mean_ = mean.to(at::kFloat).contiguous();
  if (!at::isfinite(projection_).all().item<bool>() || !at::isfinite(mean_).all().item<bool>())
    throw Error("patch autoencoder: projection or mean holds non-finite values");
}

void PatchAutoencoder::to_device(at::Device device) {
  if (projection_.defined()) projection_ = projection_.to(device);
  if (mean_.defined()) mean_ = mean_.to(device);
}

at::Tensor PatchAutoencoder::encode_to_latents(const at::Tensor& image) const {
  if (image.dim() != 4 || image.size(1) != config_.in_channels || image.size(2) % config_.patch_size != 0 ||
      image.size(3) % config_.patch_size != 0)
    throw Error("patch autoencoder: expected an image [B, " + std::to_string(config_.in_channels) +
                ", H, W] with H and W multiples of " + std::to_string(config_.patch_size));
  at::Tensor patches = at::pixel_unshuffle(image.to(at::kFloat), config_.patch_size);  // [B, P, h, w]
  if (config_.projected()) {
    at::Tensor centred = patches - mean_.view({1, -1, 1, 1});
    patches = at::einsum("kp,bphw->bkhw", {projection_, centred});
  }
  return (patches - config_.shift_factor) * config_.scaling_factor;
}

at::Tensor PatchAutoencoder::decode_latents(const at::Tensor& latents) const {
  return apply_deblocking_filter(decode_latents_unfiltered(latents), config_.deblocking);
}

at::Tensor PatchAutoencoder::decode_latents_unfiltered(const at::Tensor& latents) const {
  if (latents.dim() != 4 || latents.size(1) != latent_channels())
    throw Error("patch autoencoder: expected latents [B, " + std::to_string(latent_channels()) + ", h, w]");
  at::Tensor patches = latents.to(at::kFloat) / config_.scaling_factor + config_.shift_factor;
  if (config_.projected()) patches = at::einsum("kp,bkhw->bphw", {projection_, patches}) + mean_.view({1, -1, 1, 1});
  return at::pixel_shuffle(patches, config_.patch_size);
}

std::shared_ptr<PatchAutoencoder> load_patch_autoencoder(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path config_path = fs::path(dir) / "config.json";
  PatchAutoencoderConfig config = parse_patch_autoencoder_config(read_json_file(config_path.string()), config_path.string());
  if (!config.projected()) return std::make_shared<PatchAutoencoder>(config);
  const fs::path weights = fs::path(dir) / "diffusion_pytorch_model.safetensors";
  if (!fs::exists(weights))
    throw Error(dir + ": no diffusion_pytorch_model.safetensors (the patch projection; latent_channels " +
                std::to_string(config.channels()) + " < " + std::to_string(config.patch_values()) + ")");
  return load_patch_autoencoder(config, *safetensors_tensors({SafetensorsFile::open(weights.string())}));
}

std::shared_ptr<PatchAutoencoder> load_patch_autoencoder(const PatchAutoencoderConfig& config,
                                                         const CheckpointTensors& weights) {
  if (!config.projected()) {
    if (!weights.entries().empty())
      throw Error(weights.source() + ": unexpected tensors (this patch autoencoder has no projection)");
    return std::make_shared<PatchAutoencoder>(config);
  }
  for (const char* name : {"projection", "mean"})
    if (!weights.entries().count(name)) throw Error(weights.source() + ": missing tensor '" + name + "'");
  if (weights.entries().size() != 2)
    throw Error(weights.source() + ": unexpected tensors (expected only projection and mean)");
  std::map<std::string, at::Tensor> tensors;
  for (const char* name : {"projection", "mean"}) {
    // Inf/NaN would silently give a black or wrong fill: refused at load, like other model weights.
    at::Tensor tensor = weights.read(name).to(at::kFloat).clone();
    const int64_t bad = tensor.numel() - at::isfinite(tensor).sum().item<int64_t>();
    if (bad > 0)
      throw CorruptDataError(weights.source() + ": tensor " + name + " holds " + std::to_string(bad) +
                             " Inf/NaN value" + (bad == 1 ? "" : "s") +
                             "; the weights are damaged or stored with the wrong dtype");
    tensors[name] = tensor;
  }
  try {
    return std::make_shared<PatchAutoencoder>(config, tensors.at("projection"), tensors.at("mean"));
  } catch (const Error& error) {
    throw Error(weights.source() + ": " + error.what());
  }
}

std::shared_ptr<PatchAutoencoder> fit_patch_autoencoder(const std::vector<at::Tensor>& images, int64_t patch_size,
                                                        int64_t latent_channels) {
  if (images.empty()) throw Error("patch autoencoder: no images to fit");
  std::vector<at::Tensor> rows;
  for (const at::Tensor& image : images)
    rows.push_back(at::pixel_unshuffle(image.to(at::kDouble).unsqueeze(0), patch_size)[0].flatten(1).t());
  at::Tensor patches = at::cat(rows);  // [N, P]
  at::Tensor mean = patches.mean(0);
  at::Tensor centred = patches - mean;
  at::Tensor covariance = centred.t().mm(centred) / patches.size(0);
  auto [eigenvalues, eigenvectors] = at::linalg_eigh(covariance);  // ascending
  const int64_t values = patches.size(1);
  // Largest components first; each direction's sign fixed (largest entry positive) for
  // reproducibility across LAPACK builds.
  at::Tensor projection = eigenvectors.narrow(1, values - latent_channels, latent_channels).flip({1}).t().contiguous();
  at::Tensor largest = projection.abs().argmax(1);
  at::Tensor signs = projection.gather(1, largest.unsqueeze(1)).sign();
  projection = projection * signs;
  PatchAutoencoderConfig config;
  config.patch_size = patch_size;
  config.in_channels = images[0].size(0);
  config.latent_channels = latent_channels;
  const double spread = centred.mm(projection.t()).std().item<double>();
  config.scaling_factor = 1.0 / std::max(spread, 1e-6);
  if (!config.projected()) return std::make_shared<PatchAutoencoder>(config);
  return std::make_shared<PatchAutoencoder>(config, projection.to(at::kFloat), mean.to(at::kFloat));
}

}  // namespace flashps
