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

namespace flashps {

// One request of a packed forward call.
struct FluxRequest {
  at::Tensor hidden_states;          // [L, in_channels]: every image token of the request
  at::Tensor encoder_hidden_states;  // [T, joint_attention_dim]
  at::Tensor pooled_projections;     // [pooled_projection_dim]
  at::Tensor img_ids;                // [L, 3]
  at::Tensor txt_ids;                // [T, 3]
  double timestep = 0;               // sigma in [0, 1] (the model multiplies by 1000)
  std::optional<double> guidance;    // guidance scale, for guidance-distilled models
  at::Tensor carried_rows;           // image tokens in the residual stream; undefined = all
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
  at::ScalarType dtype() const { return proj_out->weight.scalar_type(); }
  int block_count() const { return static_cast<int>(config_.block_count()); }

  Linear x_embedder{nullptr}, context_embedder{nullptr}, norm_out_linear{nullptr}, proj_out{nullptr};
  FluxTimeTextEmbedding time_text_embed{nullptr};
  std::vector<FluxDoubleBlock> double_blocks;
  std::vector<FluxSingleBlock> single_blocks;

 private:
  FluxConfig config_;
};
TORCH_MODULE(FluxTransformer);

// Loads <dir>/config.json and the diffusers weights (single file or sharded index) strictly.
FluxTransformer load_flux_transformer(const std::string& model_dir, at::ScalarType dtype);

}  // namespace flashps

#include "engine/cost_model.h"

namespace flashps {

// Per-block work of a Flux model (double and single blocks both cost 12*dim^2 multiply-adds per
// computed token: 10 for queries, output and MLP, 2 for keys and values).
std::vector<engine::BlockWork> flux_block_work(const FluxConfig& config, int64_t bytes_per_value);

}  // namespace flashps
