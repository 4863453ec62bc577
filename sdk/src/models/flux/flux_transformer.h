// FluxTransformer2DModel (diffusers layout and keys): x_embedder, context_embedder,
// time_text_embed, transformer_blocks.N (double stream), single_transformer_blocks.N,
// norm_out.linear, proj_out. Real FLUX.1 / FLUX.1-Fill diffusers checkpoints load unchanged.
#pragma once
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/token_router.h"
#include "models/common/layers.h"
#include "models/flux/flux_blocks.h"
#include "models/flux/flux_config.h"
#include "models/loading/checkpoint_tensors.h"

namespace flashps {

// One request of a packed forward call.
struct FluxRequest {
  at::Tensor hidden_states;          // [L, in_channels], or [L, C] with `conditioning`: every image token
  // Optional [L, in_channels - C], appended to hidden_states channel-wise (Fill models' masked-image
  // latents and mask): it is constant over a request's steps, so callers keep it apart instead of
  // concatenating each step; the model copies both into its packed input once.
  at::Tensor conditioning;
  // Optional, instead of `conditioning`: conditioning_embedding(conditioning, carried_rows), the
  // conditioning's share of x_embedder (plus its bias) for the rows in the residual stream. It is
  // constant over a request's steps, so with it each step copies and projects only the latents.
  at::Tensor conditioning_embedding;
  at::Tensor encoder_hidden_states;  // [T, joint_attention_dim]
  at::Tensor pooled_projections;     // [pooled_projection_dim]
  at::Tensor img_ids;                // [L, 3]
  at::Tensor txt_ids;                // [T, 3]
  double timestep = 0;               // sigma in [0, 1] (the model multiplies by 1000)
  std::optional<double> guidance;    // guidance scale, for guidance-distilled models
  at::Tensor carried_rows;           // image tokens in the residual stream; undefined = all
  // Optional rotary tables of img_ids / txt_ids from rotary_tables(): constant over a request's
  // steps, so callers stepping a request compute them once (else every forward() does).
  std::shared_ptr<const RotaryTables> image_rope, text_rope;
  engine::TokenRouter* router = nullptr;
};

class FluxTransformerImpl : public torch::nn::Module {
 public:
  explicit FluxTransformerImpl(const FluxConfig& config);

  // Runs a packed batch; returns each request's output [L, out_channels] in the model dtype.
  std::vector<at::Tensor> forward(const std::vector<FluxRequest>& requests) const;

  // diffusers-shaped call (the fixtures' signature): hidden [B, L, C], encoder [B, T, J],
  // pooled [B, P], timestep [B], img_ids [L, 3], txt_ids [T, 3], guidance [B] or undefined.
  at::Tensor forward_batched(const at::Tensor& hidden_states, const at::Tensor& encoder_hidden_states,
                             const at::Tensor& pooled_projections, const at::Tensor& timestep,
                             const at::Tensor& img_ids, const at::Tensor& txt_ids,
                             const at::Tensor& guidance) const;

  const FluxConfig& config() const { return config_; }
  // FluxPosEmbed tables of position ids [S, 3], on the model's device (for FluxRequest).
  RotaryTables rotary_tables(const at::Tensor& ids) const;
  // x_embedder applied to the conditioning columns alone (bias included) for `rows` of
  // conditioning [L, in_channels - C] (undefined rows: all L): FluxRequest::conditioning_embedding.
  at::Tensor conditioning_embedding(const at::Tensor& conditioning, const at::Tensor& rows) const;
  at::ScalarType dtype() const { return proj_out->weight_dtype(); }
  int block_count() const { return static_cast<int>(config_.block_count()); }
  // Forming the calling thread's last forward()'s packed inputs (token rows, conditioning, RoPE
  // tables, offsets), before any layer runs: the model's share of a serving step's batch assembly.
  // Per thread, because pipelines on several threads share one model's weights.
  struct InputPacking {
    double seconds = 0, cpu_seconds = 0;  // wall time, and the calling thread's CPU time
  };
  static InputPacking last_input_packing();

  Linear x_embedder{nullptr}, context_embedder{nullptr}, norm_out_linear{nullptr}, proj_out{nullptr};
  FluxTimeTextEmbedding time_text_embed{nullptr};
  std::vector<FluxDoubleBlock> double_blocks;
  std::vector<FluxSingleBlock> single_blocks;

 private:
  FluxConfig config_;
};
TORCH_MODULE(FluxTransformer);

// FluxRequest::conditioning_embedding of a request stepped many times: computed once, and again
// only when its carried rows change (another tensor, e.g. after a replay restarts in full).
struct ConditioningEmbeddingCache {
  at::Tensor embedding, rows;
  const at::Tensor& get(const FluxTransformerImpl& model, const at::Tensor& conditioning, const at::Tensor& carried_rows);
  void reset() { embedding = rows = at::Tensor(); }
};

// Loads <dir>/config.json and the diffusers weights (single file or sharded index) strictly.
FluxTransformer load_flux_transformer(const std::string& model_dir, at::ScalarType dtype);
// From weights already opened (a single file, a GGUF file, any key layout seen in diffusers'
// keys) and a config; `config_source` names the config in errors. `keep_quantized`: quantized and
// float8 Linear weights stay as stored (WeightLoadOptions::keep_quantized).
FluxTransformer load_flux_transformer(const CheckpointTensors& weights, const FluxConfig& config,
                                      const std::string& config_source, at::ScalarType dtype, bool keep_quantized = false);
// A checkpoint's tensors in diffusers' keys: Black Forest Labs' keys (bare or under
// "model.diffusion_model.") mapped through their table, anything else as stored.
std::unique_ptr<CheckpointTensors> flux_transformer_tensors(std::unique_ptr<CheckpointTensors> stored);

}  // namespace flashps
