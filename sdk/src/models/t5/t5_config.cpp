#include "models/t5/t5_config.h"

#include <nlohmann/json.hpp>

#include "core/diagnostics/error.h"
#include "models/loading/config_checks.h"

namespace flashps {

T5Config T5Config::from_json(const nlohmann::json& json, const std::string& source) {
  T5Config config;
  std::string feed_forward_proj;
  try {
    config.vocab_size = json.at("vocab_size").get<int64_t>();
    config.d_model = json.at("d_model").get<int64_t>();
    config.d_kv = json.at("d_kv").get<int64_t>();
    config.d_ff = json.at("d_ff").get<int64_t>();
    config.num_layers = json.at("num_layers").get<int64_t>();
    config.num_heads = json.at("num_heads").get<int64_t>();
    config.relative_attention_num_buckets = json.value("relative_attention_num_buckets", int64_t(32));
    config.relative_attention_max_distance = json.value("relative_attention_max_distance", int64_t(128));
    config.layer_norm_epsilon = json.value("layer_norm_epsilon", 1e-6);
    feed_forward_proj = json.value("feed_forward_proj", std::string("relu"));
  } catch (const nlohmann::json::exception& error) {
    throw CorruptDataError(source + ": T5 config: " + error.what());
  }
  // transformers' T5Config: "gated-ACT" or "ACT"; "gated-gelu" means gelu_new (kept for
  // backwards compatibility there, and what every T5 v1.1 checkpoint says).
  const std::string gated_prefix = "gated-";
  config.gated = feed_forward_proj.rfind(gated_prefix, 0) == 0;
  config.activation = config.gated ? feed_forward_proj.substr(gated_prefix.size()) : feed_forward_proj;
  if (feed_forward_proj == "gated-gelu") config.activation = "gelu_new";
  if (config.activation != "gelu_new" && config.activation != "gelu" && config.activation != "relu" &&
      config.activation != "silu")
    throw UnsupportedError(source + ": feed_forward_proj '" + feed_forward_proj +
                           "' is not supported (relu, gelu, gelu_new, silu, each optionally 'gated-')");
  // Bounds before allocation (T5 XXL: 4096 wide, 64 heads, 10240 feed-forward, 32128 tokens).
  require_config_range(source, "vocab_size", config.vocab_size, 2, 1 << 20);
  require_config_range(source, "d_model", config.d_model, 1, 16384);
  require_config_range(source, "d_kv", config.d_kv, 1, 1024);
  require_config_range(source, "d_ff", config.d_ff, 1, 131072);
  require_config_range(source, "num_layers", config.num_layers, 1, 256);
  require_config_range(source, "num_heads", config.num_heads, 1, 1024);
  require_config_range(source, "relative_attention_num_buckets", config.relative_attention_num_buckets, 4, 4096);
  // The logarithmic buckets start at half of half the buckets; beyond that the distance must grow.
  require_config_range(source, "relative_attention_max_distance", config.relative_attention_max_distance,
                       config.relative_attention_num_buckets / 4 + 1, 1 << 20);
  if (!(config.layer_norm_epsilon > 0 && config.layer_norm_epsilon < 1))
    throw CorruptDataError(source + ": layer_norm_epsilon must be in (0, 1)");
  return config;
}

}  // namespace flashps
