#include "models/vae/autoencoder_kl_config.h"

#include <nlohmann/json.hpp>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "models/loading/config_checks.h"

namespace flashps {
namespace {

using nlohmann::json;

// Reads `key` as T; a missing or null key is an error when required, else keeps `fallback`.
template <typename T>
T read_key(const json& config, const char* key, const std::string& source, bool required,
           T fallback = T()) {
  auto found = config.find(key);
  if (found == config.end() || found->is_null()) {
    if (required) throw Error(source + ": missing required key '" + key + "'");
    return fallback;
  }
  try {
    return found->get<T>();
  } catch (const json::exception&) {
    throw Error(source + ": key '" + key + "' has an unexpected value " + found->dump());
  }
}

// down_block_types / up_block_types are optional, but if present they must name the only block
// kinds AutoencoderKL's plain encoder and decoder use.
void check_block_types(const json& config, const char* key, const char* expected_type,
                       size_t expected_count, const std::string& source) {
  auto types = read_key<std::vector<std::string>>(config, key, source, /*required=*/false);
  if (types.empty()) return;
  if (types.size() != expected_count)
    throw Error(source + ": key '" + key + "' has " + std::to_string(types.size()) +
                " entries but block_out_channels has " + std::to_string(expected_count));
  for (const std::string& type : types)
    if (type != expected_type)
      throw Error(source + ": key '" + key + "' contains '" + type + "'; only '" + expected_type +
                  "' is supported");
}

}  // namespace

int64_t AutoencoderKLConfig::downscale_factor() const {
  return int64_t{1} << (block_out_channels.empty() ? 0 : block_out_channels.size() - 1);
}

AutoencoderKLConfig parse_autoencoder_kl_config(const json& config, const std::string& source) {
  if (!config.is_object()) throw Error(source + ": expected a JSON object");
  const std::string class_name = read_key<std::string>(config, "_class_name", source, false);
  if (!class_name.empty() && class_name != "AutoencoderKL")
    throw Error(source + ": _class_name is '" + class_name + "', expected 'AutoencoderKL'");

  AutoencoderKLConfig parsed;
  parsed.in_channels = read_key<int64_t>(config, "in_channels", source, true);
  parsed.out_channels = read_key<int64_t>(config, "out_channels", source, true);
  parsed.block_out_channels =
      read_key<std::vector<int64_t>>(config, "block_out_channels", source, true);
  parsed.layers_per_block = read_key<int64_t>(config, "layers_per_block", source, true);
  parsed.latent_channels = read_key<int64_t>(config, "latent_channels", source, true);
  parsed.norm_num_groups = read_key<int64_t>(config, "norm_num_groups", source, true);
  parsed.scaling_factor = read_key<double>(config, "scaling_factor", source, true);
  parsed.shift_factor = read_key<double>(config, "shift_factor", source, false, 0.0);
  parsed.use_quant_conv = read_key<bool>(config, "use_quant_conv", source, false, true);
  parsed.use_post_quant_conv = read_key<bool>(config, "use_post_quant_conv", source, false, true);
  parsed.mid_block_add_attention =
      read_key<bool>(config, "mid_block_add_attention", source, false, true);
  parsed.force_upcast = read_key<bool>(config, "force_upcast", source, false, true);
  // sample_size is an int in diffusers' AutoencoderKL configs, a [h, w] pair in a few others.
  auto sample_size = config.find("sample_size");
  if (sample_size != config.end() && sample_size->is_array() && !sample_size->empty())
    parsed.sample_size = read_key<std::vector<int64_t>>(config, "sample_size", source, false)[0];
  else
    parsed.sample_size = read_key<int64_t>(config, "sample_size", source, false, 32);

  const std::string activation = read_key<std::string>(config, "act_fn", source, false, "silu");
  if (activation != "silu")
    throw Error(source + ": act_fn '" + activation + "' is not supported (only 'silu')");

  // Bounds before anything is allocated from these numbers (SD/Flux VAEs: 3 channels, [128, 256,
  // 512, 512], 2 layers per block, 4 or 16 latent channels, 32 groups).
  require_config_range(source, "in_channels", parsed.in_channels, 1, 64);
  require_config_range(source, "out_channels", parsed.out_channels, 1, 64);
  require_config_range(source, "layers_per_block", parsed.layers_per_block, 1, 64);
  require_config_range(source, "latent_channels", parsed.latent_channels, 1, 1024);
  require_config_range(source, "norm_num_groups", parsed.norm_num_groups, 1, 1024);
  require_config_range(source, "sample_size", parsed.sample_size, 1, 65536);
  if (parsed.block_out_channels.empty())
    throw Error(source + ": key 'block_out_channels' must not be empty");
  require_config_range(source, "block_out_channels entries", static_cast<int64_t>(parsed.block_out_channels.size()),
                       1, 8);
  for (int64_t channels : parsed.block_out_channels) {
    require_config_range(source, "block_out_channels[i]", channels, 1, 16384);
    if (channels % parsed.norm_num_groups != 0)
      throw Error(source + ": block_out_channels entry " + std::to_string(channels) +
                  " is not divisible by norm_num_groups " + std::to_string(parsed.norm_num_groups));
  }
  if (parsed.scaling_factor == 0.0) throw Error(source + ": key 'scaling_factor' must not be 0");
  check_block_types(config, "down_block_types", "DownEncoderBlock2D",
                    parsed.block_out_channels.size(), source);
  check_block_types(config, "up_block_types", "UpDecoderBlock2D", parsed.block_out_channels.size(),
                    source);
  return parsed;
}

AutoencoderKLConfig read_autoencoder_kl_config(const std::string& path) {
  return parse_autoencoder_kl_config(read_json_file(path), path);
}

}  // namespace flashps
