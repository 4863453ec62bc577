#include "models/t5/t5_encoder_model.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/container/modulelist.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/diagnostics/error.h"
#include "core/files/safetensors.h"
#include "models/loading/checkpoint_tensors.h"
#include "models/loading/config_checks.h"
#include "models/loading/key_layout.h"
#include "models/loading/model_files.h"
#include "models/loading/weights.h"

namespace flashps {
namespace {

at::Tensor activate(const at::Tensor& x, const std::string& activation) {
  if (activation == "gelu_new") return gelu_tanh(x);
  if (activation == "gelu") return at::gelu(x);
  if (activation == "silu") return at::silu(x);
  return at::relu(x);
}

}  // namespace

struct T5EncoderModelImpl::Block {
  Linear q{nullptr}, k{nullptr}, v{nullptr}, o{nullptr};
  Linear wi{nullptr}, wi_0{nullptr}, wi_1{nullptr}, wo{nullptr};
  RMSNorm attention_norm{nullptr}, feed_forward_norm{nullptr};
};

at::Tensor t5_relative_position_buckets(int64_t query_length, int64_t key_length, int64_t num_buckets,
                                        int64_t max_distance) {
  // The same tensor operations as transformers, in the same float32 order, so that a distance
  // on a bucket boundary lands where the reference puts it.
  const at::Tensor query = at::arange(query_length, at::kLong).unsqueeze(1);
  const at::Tensor key = at::arange(key_length, at::kLong).unsqueeze(0);
  at::Tensor relative = key - query;
  const int64_t half = num_buckets / 2;
  at::Tensor buckets = (relative > 0).to(at::kLong) * half;
  relative = relative.abs();
  const int64_t max_exact = half / 2;
  const at::Tensor is_small = relative < max_exact;
  // log(0) at distance 0 is -inf here, as in the reference; is_small discards it.
  at::Tensor if_large =
      max_exact + (at::log(relative.to(at::kFloat) / max_exact) /
                   std::log(static_cast<double>(max_distance) / static_cast<double>(max_exact)) *
                   static_cast<double>(half - max_exact))
                      .to(at::kLong);
  if_large = at::minimum(if_large, at::full_like(if_large, half - 1));
  return buckets + at::where(is_small, relative, if_large);
}

T5EncoderModelImpl::T5EncoderModelImpl(T5Config config, T5EmbeddingKey embedding_key) : config_(std::move(config)) {
  const int64_t dim = config_.d_model, inner = config_.inner_dim();
  auto embedding = std::make_shared<PathNode>();
  token_embedding_ = embedding->register_parameter("weight", at::empty({config_.vocab_size, dim}), false);
  auto encoder = std::make_shared<PathNode>();
  if (embedding_key == T5EmbeddingKey::shared)
    register_module("shared", embedding);
  else
    encoder->register_module("embed_tokens", embedding);
  torch::nn::ModuleList blocks;
  for (int64_t i = 0; i < config_.num_layers; ++i) {
    auto block = std::make_shared<Block>();
    auto node = std::make_shared<PathNode>(), attention_layer = std::make_shared<PathNode>();
    auto attention = std::make_shared<PathNode>(), feed_forward_layer = std::make_shared<PathNode>();
    auto feed_forward = std::make_shared<PathNode>();
    block->q = attention->register_module("q", Linear(dim, inner, /*with_bias=*/false));
    block->k = attention->register_module("k", Linear(dim, inner, false));
    block->v = attention->register_module("v", Linear(dim, inner, false));
    block->o = attention->register_module("o", Linear(inner, dim, false));
    if (i == 0) {  // only the first block holds the bias table; every block adds its bias
      auto bias = std::make_shared<PathNode>();
      relative_attention_bias_ = bias->register_parameter(
          "weight", at::empty({config_.relative_attention_num_buckets, config_.num_heads}), false);
      attention->register_module("relative_attention_bias", bias);
    }
    attention_layer->register_module("SelfAttention", attention);
    block->attention_norm = attention_layer->register_module("layer_norm", RMSNorm(dim, config_.layer_norm_epsilon));
    if (config_.gated) {
      block->wi_0 = feed_forward->register_module("wi_0", Linear(dim, config_.d_ff, false));
      block->wi_1 = feed_forward->register_module("wi_1", Linear(dim, config_.d_ff, false));
    } else {
      block->wi = feed_forward->register_module("wi", Linear(dim, config_.d_ff, false));
    }
    block->wo = feed_forward->register_module("wo", Linear(config_.d_ff, dim, false));
    feed_forward_layer->register_module("DenseReluDense", feed_forward);
    block->feed_forward_norm =
        feed_forward_layer->register_module("layer_norm", RMSNorm(dim, config_.layer_norm_epsilon));
    torch::nn::ModuleList layers;
    layers->push_back(attention_layer);
    layers->push_back(feed_forward_layer);
    node->register_module("layer", layers);
    blocks->push_back(node);
    blocks_.push_back(block);
  }
  encoder->register_module("block", blocks);
  final_layer_norm_ = encoder->register_module("final_layer_norm", RMSNorm(dim, config_.layer_norm_epsilon));
  register_module("encoder", encoder);
}

at::Tensor T5EncoderModelImpl::forward(const at::Tensor& input_ids, const at::Tensor& attention_mask) const {
  at::NoGradGuard no_grad;
  if (input_ids.dim() != 2) throw InvalidArgumentError("T5 encoder: input_ids must be [batch, length]");
  const int64_t batch = input_ids.size(0), length = input_ids.size(1);
  if (batch < 1 || length < 1 || length > kMaxSequenceLength)
    throw InvalidArgumentError("T5 encoder: sequence length " + std::to_string(length) + " outside [1, " +
                               std::to_string(kMaxSequenceLength) + "]");
  const at::Tensor ids = input_ids.to(token_embedding_.device(), at::kLong);
  if (ids.min().item<int64_t>() < 0 || ids.max().item<int64_t>() >= config_.vocab_size)
    throw InvalidArgumentError("T5 encoder: token id outside the vocabulary of " +
                               std::to_string(config_.vocab_size));
  const int64_t dim = config_.d_model, heads = config_.num_heads, head_dim = config_.d_kv;
  at::Tensor hidden = token_embedding_.index_select(0, ids.reshape({-1})).reshape({batch, length, dim}).to(at::kFloat);

  // The position bias [1, heads, L, L] of block 0, shared by every block; the mask adds the
  // float32 minimum to ignored keys, as transformers does (a fully masked row stays finite).
  const at::Tensor buckets = t5_relative_position_buckets(length, length, config_.relative_attention_num_buckets,
                                                          config_.relative_attention_max_distance)
                                 .to(hidden.device());
  at::Tensor position_bias = relative_attention_bias_.to(at::kFloat)
                                 .index_select(0, buckets.reshape({-1}))
                                 .reshape({length, length, heads})
                                 .permute({2, 0, 1})
                                 .unsqueeze(0)
                                 .contiguous();
  if (attention_mask.defined()) {
    if (attention_mask.sizes() != input_ids.sizes())
      throw InvalidArgumentError("T5 encoder: attention_mask must have input_ids' shape [batch, length]");
    const at::Tensor keep = attention_mask.to(hidden.device(), at::kFloat).reshape({batch, 1, 1, length});
    position_bias = position_bias + (1.0 - keep) * static_cast<double>(std::numeric_limits<float>::lowest());
  }

  auto split_heads = [&](const at::Tensor& x) {
    return x.reshape({batch, length, heads, head_dim}).transpose(1, 2);
  };
  for (const auto& block_pointer : blocks_) {
    const Block& block = *block_pointer;
    at::Tensor normed = block.attention_norm->forward(hidden);
    const at::Tensor q = split_heads(block.q->forward(normed));
    const at::Tensor k = split_heads(block.k->forward(normed));
    const at::Tensor v = split_heads(block.v->forward(normed));
    // T5 does not scale the scores by 1/sqrt(d_kv): its initialisation accounts for it.
    const at::Tensor weights = at::softmax(at::matmul(q, k.transpose(-1, -2)) + position_bias, -1);
    const at::Tensor attended =
        at::matmul(weights, v).transpose(1, 2).reshape({batch, length, config_.inner_dim()});
    hidden = hidden + block.o->forward(attended);

    normed = block.feed_forward_norm->forward(hidden);
    const at::Tensor inner = config_.gated
                                 ? activate(block.wi_0->forward(normed), config_.activation) * block.wi_1->forward(normed)
                                 : activate(block.wi->forward(normed), config_.activation);
    hidden = hidden + block.wo->forward(inner);
  }
  return final_layer_norm_->forward(hidden).to(at::kFloat);
}

namespace {

// The weights' headers must agree with the config before the model is allocated (a config
// claiming XXL sizes over tiny weights fails here, naming both).
void check_config_against_weights(const T5Config& config, const std::string& source, const WeightShapes& weights,
                                  const std::string& embedding_name) {
  const int64_t dim = config.d_model, inner = config.inner_dim();
  weights.require_block_count(source, "num_layers", config.num_layers, "encoder.block");
  weights.require_shape(source, "vocab_size and d_model", embedding_name, {config.vocab_size, dim});
  weights.require_shape(source, "num_heads, d_kv and d_model", "encoder.block.0.layer.0.SelfAttention.q.weight",
                        {inner, dim});
  weights.require_shape(source, "relative_attention_num_buckets and num_heads",
                        "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
                        {config.relative_attention_num_buckets, config.num_heads});
  weights.require_shape(source, "d_ff and d_model",
                        std::string("encoder.block.0.layer.1.DenseReluDense.") + (config.gated ? "wi_0" : "wi") +
                            ".weight",
                        {config.d_ff, dim});
}

}  // namespace

T5EncoderModel load_t5_encoder_model(const std::string& dir, at::ScalarType dtype) {
  namespace fs = std::filesystem;
  const std::string config_source = (fs::path(dir) / "config.json").string();
  const T5Config config = T5Config::from_json(read_component_config(dir), config_source);
  return load_t5_encoder_model(*safetensors_tensors(open_component_weights(dir, "model")), config, config_source,
                               dtype);
}

T5EncoderModel load_t5_encoder_model(const CheckpointTensors& weights, const T5Config& config,
                                     const std::string& config_source, at::ScalarType dtype,
                                     const WeightLoadOptions& base_options) {
  // T5EncoderModel ties shared and encoder.embed_tokens: either may be stored, or both.
  const bool has_shared = weights.entries().count("shared.weight") > 0;
  const bool has_embed_tokens = weights.entries().count("encoder.embed_tokens.weight") > 0;
  const T5EmbeddingKey key =
      !has_shared && has_embed_tokens ? T5EmbeddingKey::encoder_embed_tokens : T5EmbeddingKey::shared;
  const std::string embedding_name =
      key == T5EmbeddingKey::shared ? "shared.weight" : "encoder.embed_tokens.weight";
  const WeightShapes shapes(weights);
  check_config_against_weights(config, config_source, shapes, embedding_name);
  if (has_shared && has_embed_tokens)
    shapes.require_shape(config_source, "vocab_size and d_model", "encoder.embed_tokens.weight",
                         {config.vocab_size, config.d_model});

  T5EncoderModel model(config, key);
  WeightLoadOptions options = base_options;
  options.dtype = dtype;
  if (has_shared && has_embed_tokens) options.ignored_keys.push_back("encoder.embed_tokens.weight");
  load_weights_strict(*model, weights, options);
  prefer_fast_linear_layout(*model);
  return model;
}

std::unique_ptr<CheckpointTensors> t5_encoder_tensors(std::unique_ptr<CheckpointTensors> stored) {
  // Whole-model exports keep the transformers model under "transformer." (ComfyUI's Flux files:
  // text_encoders.t5xxl.transformer.*); anything else is used as stored.
  const std::string prefix = "transformer.";
  if (!stored->entries().count(prefix + "shared.weight") && !stored->entries().count(prefix + "encoder.final_layer_norm.weight"))
    return stored;
  KeyLayout layout;
  for (const auto& [stored_key, entry] : stored->entries())
    if (stored_key.compare(0, prefix.size(), prefix) == 0) layout[stored_key.substr(prefix.size())] = {stored_key};
  return tensors_in_layout(std::move(stored), std::move(layout), "transformers T5 (under transformer.)");
}

}  // namespace flashps
