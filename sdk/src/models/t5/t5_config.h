// T5EncoderModel configuration (transformers' T5Config field names), read from the config.json
// of a text_encoder_2 folder. Real Flux folders: google/t5-v1_1-xxl (d_model 4096, 64 heads of 64,
// d_ff 10240, 24 layers, "gated-gelu").
#pragma once
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace flashps {

struct T5Config {
  int64_t vocab_size = 32128, d_model = 4096, d_kv = 64, d_ff = 10240;
  int64_t num_layers = 24, num_heads = 64;
  int64_t relative_attention_num_buckets = 32, relative_attention_max_distance = 128;
  double layer_norm_epsilon = 1e-6;
  // feed_forward_proj "gated-gelu" (T5 v1.1) is a gated feed-forward (wi_0, wi_1) with gelu_new;
  // "relu" (original T5) a plain one (wi).
  bool gated = true;
  std::string activation = "gelu_new";  // gelu_new | gelu | relu | silu

  int64_t inner_dim() const { return num_heads * d_kv; }

  // Errors name `source` and the field; every size is bounded before anything is allocated.
  static T5Config from_json(const nlohmann::json& json, const std::string& source);
};

}  // namespace flashps
