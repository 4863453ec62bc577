// T5EncoderModel (transformers), Flux's text_encoder_2: token embedding, pre-norm blocks of
// self-attention with a shared relative position bias and a (gated) feed-forward, RMS norms, a
// final norm; output last_hidden_state. Module paths equal the checkpoint keys
// ("encoder.block.3.layer.1.DenseReluDense.wi_0.weight"), so loading is a strict lookup.
#pragma once
#include <ATen/Tensor.h>
#include <torch/nn/module.h>

#include <memory>
#include <string>
#include <vector>

#include "models/common/layers.h"
#include "models/loading/checkpoint_tensors.h"
#include "models/loading/weights.h"
#include "models/t5/t5_config.h"

namespace flashps {

// Where a checkpoint keeps the token embedding: T5EncoderModel saves "shared.weight"; some
// exports keep only the tied copy "encoder.embed_tokens.weight".
enum class T5EmbeddingKey { shared, encoder_embed_tokens };

class T5EncoderModelImpl : public torch::nn::Module {
 public:
  // Longest input forward() accepts: attention holds heads x length^2 scores (Flux uses 512).
  static constexpr int64_t kMaxSequenceLength = 4096;

  explicit T5EncoderModelImpl(T5Config config, T5EmbeddingKey embedding_key = T5EmbeddingKey::shared);
  // input_ids [B, L]; attention_mask [B, L] (1 = attend, 0 = ignore) or undefined: FluxPipeline
  // passes none, so padding is attended to. Returns last_hidden_state [B, L, d_model], float32
  // (bfloat16 weights multiply float32 activations, see core/kernels/linear.h). InvalidArgumentError for
  // ids outside the vocabulary, a mask of another shape, or a length outside 1..kMaxSequenceLength.
  at::Tensor forward(const at::Tensor& input_ids, const at::Tensor& attention_mask = {}) const;
  const T5Config& config() const { return config_; }

 private:
  struct Block;
  T5Config config_;
  at::Tensor token_embedding_, relative_attention_bias_;
  std::vector<std::shared_ptr<Block>> blocks_;
  RMSNorm final_layer_norm_{nullptr};
};
TORCH_MODULE(T5EncoderModel);

// transformers' T5Attention._relative_position_bucket with bidirectional=True, for every
// (query, key) pair: [query_length, key_length] int64 buckets of key - query.
at::Tensor t5_relative_position_buckets(int64_t query_length, int64_t key_length, int64_t num_buckets,
                                        int64_t max_distance);

// Loads a transformers T5EncoderModel folder (text_encoder_2/): config.json and model.safetensors,
// or the shards named by model.safetensors.index.json. Parameters are converted to `dtype` one
// tensor at a time, so a bfloat16 load of a float32 checkpoint never holds a float32 copy of the
// model. Errors name the folder or file and the problem: no config, no weights, a shard the index
// names that is missing, shapes the config does not imply, missing or unexpected keys.
T5EncoderModel load_t5_encoder_model(const std::string& dir, at::ScalarType dtype = at::kFloat);

// Same from tensors in transformers' keys (after t5_encoder_tensors; ComfyUI's t5xxl files hold
// "shared.weight", "encoder.embed_tokens.weight" or both), checking `config` (read from
// `config_source`, named in errors) against their shapes first; the folder loader is this one.
// `options` pass through to the strict loader; its dtype is replaced by `dtype`.
T5EncoderModel load_t5_encoder_model(const CheckpointTensors& weights, const T5Config& config,
                                     const std::string& config_source, at::ScalarType dtype,
                                     const WeightLoadOptions& options = {});

// `stored` in transformers' keys: a whole-model export under "transformer." is seen without that
// prefix; anything else is returned unchanged.
std::unique_ptr<CheckpointTensors> t5_encoder_tensors(std::unique_ptr<CheckpointTensors> stored);

}  // namespace flashps
