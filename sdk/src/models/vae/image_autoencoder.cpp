#include "models/vae/image_autoencoder.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "models/vae/autoencoder_kl.h"
#include "models/vae/patch_autoencoder.h"

namespace flashps {

at::ScalarType autoencoder_dtype_for(at::ScalarType model_dtype) {
  return model_dtype == at::kBFloat16 ? at::kBFloat16 : at::kFloat;
}

std::shared_ptr<ImageAutoencoder> load_image_autoencoder(const std::string& dir, at::ScalarType dtype) {
  const std::filesystem::path config_path = std::filesystem::path(dir) / "config.json";
  if (!std::filesystem::is_regular_file(config_path))
    throw Error(dir + ": no config.json (expected a diffusers autoencoder folder)");
  const nlohmann::json config = read_json_file(config_path.string());
  const std::string class_name = config.is_object() ? config.value("_class_name", std::string("AutoencoderKL"))
                                                    : std::string("AutoencoderKL");
  if (class_name == "AutoencoderKL") return load_autoencoder_kl(dir, dtype);
  if (class_name == "FlashPSPatchAutoencoder")
    return load_patch_autoencoder(dir);
  throw Error(config_path.string() + ": unsupported autoencoder class \"" + class_name +
              "\" (supported: AutoencoderKL, FlashPSPatchAutoencoder)");
}

std::shared_ptr<ImageAutoencoder> load_image_autoencoder(const CheckpointTensors& weights,
                                                         const nlohmann::json& config,
                                                         const std::string& config_source, at::ScalarType dtype,
                                                         const WeightLoadOptions& options) {
  const std::string class_name = config.is_object() ? config.value("_class_name", std::string("AutoencoderKL"))
                                                    : std::string("AutoencoderKL");
  if (class_name == "AutoencoderKL")
    return load_autoencoder_kl(weights, parse_autoencoder_kl_config(config, config_source), config_source, dtype,
                               options);
  if (class_name == "FlashPSPatchAutoencoder")
    return load_patch_autoencoder(parse_patch_autoencoder_config(config, config_source), weights);
  throw Error(config_source + ": unsupported autoencoder class \"" + class_name +
              "\" (supported: AutoencoderKL, FlashPSPatchAutoencoder)");
}

}  // namespace flashps
