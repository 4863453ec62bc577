// CLIPTextModel and CLIPTextModelWithProjection (transformers), the text encoders of Stable
// Diffusion 1.x/2.x/XL. Module paths equal the checkpoint keys ("text_model.encoder.layers.3.
// self_attn.q_proj.weight"), so loading is a strict lookup.
#pragma once
#include <ATen/Tensor.h>
#include <torch/nn/module.h>

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "models/common/layers.h"
#include "models/loading/checkpoint_tensors.h"
#include "models/loading/weights.h"

namespace flashps {

struct ClipTextConfig {
  int64_t vocab_size = 49408, hidden_size = 768, intermediate_size = 3072;
  int64_t num_hidden_layers = 12, num_attention_heads = 12, max_position_embeddings = 77;
  std::string hidden_act = "quick_gelu";  // quick_gelu | gelu
  double layer_norm_eps = 1e-5;
  int64_t eos_token_id = 2;  // 2 (legacy configs): pool at the first maximum id instead
  int64_t projection_dim = 0;  // > 0 with CLIPTextModelWithProjection (text_projection)
};

// Errors name `source_name` and the key.
ClipTextConfig parse_clip_text_config(const nlohmann::json& config, const std::string& source_name);

struct ClipTextOutput {
  at::Tensor last_hidden_state;  // [B, L, D], after final_layer_norm
  at::Tensor pooler_output;      // [B, D] at the pooled (end-of-text) position
  at::Tensor penultimate;        // [B, L, D]: hidden_states[-2], no final norm (SD2/SDXL)
  at::Tensor text_embeds;        // [B, projection_dim]: text_projection(pooler_output), if any
};

class ClipTextModelImpl : public torch::nn::Module {
 public:
  explicit ClipTextModelImpl(ClipTextConfig config);
  // input_ids [B, L] (L <= max_position_embeddings), no attention mask (as SD pipelines call it).
  ClipTextOutput forward(const at::Tensor& input_ids) const;
  const ClipTextConfig& config() const { return config_; }

 private:
  struct Layer;
  ClipTextConfig config_;
  at::Tensor token_embedding_, position_embedding_;
  std::vector<std::shared_ptr<Layer>> layers_;
  at::Tensor final_norm_weight_, final_norm_bias_;
  Linear text_projection_{nullptr};
};
TORCH_MODULE(ClipTextModel);

// Loads <dir>/config.json and <dir>/model.safetensors (transformers' name) or
// diffusion_pytorch_model.safetensors; "_class_name"/"architectures" CLIPTextModelWithProjection
// adds text_projection. Unknown keys in the file (e.g. position_ids buffers) are an error except
// text_model.embeddings.position_ids.
ClipTextModel load_clip_text_model(const std::string& dir, at::ScalarType dtype = at::kFloat);

// Same from tensors in Hugging Face's keys (after clip_text_tensors), checking `config` (read from
// `config_source`, named in errors) against their shapes first; the folder loader is this one.
// `options` pass through to the strict loader; its dtype is replaced by `dtype`.
ClipTextModel load_clip_text_model(const CheckpointTensors& weights, const ClipTextConfig& config,
                                   const std::string& config_source, at::ScalarType dtype,
                                   const WeightLoadOptions& options = {});

// `stored` in Hugging Face's keys: OpenCLIP keys and keys under "transformer." are seen through
// clip_text_layout (clip_layouts.h); tensors already in the model's keys are returned unchanged.
std::unique_ptr<CheckpointTensors> clip_text_tensors(std::unique_ptr<CheckpointTensors> stored,
                                                     const ClipTextConfig& config);

}  // namespace flashps
