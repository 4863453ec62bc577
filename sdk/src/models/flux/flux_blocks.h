// Flux transformer blocks with diffusers parameter names: FluxTransformerBlock (double stream:
// separate text and image weights, joint attention) and FluxSingleTransformerBlock (one stream,
// parallel attention + MLP). Both run on packed rows and honour the engine's BlockTokens.
#pragma once
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>

#include <vector>

#include "engine/token_router.h"
#include "models/common/fused_linear.h"
#include "models/common/layers.h"
#include "models/common/packed_batch.h"
#include "models/flux/flux_embeddings.h"

namespace flashps {

// Per-forward state shared by all blocks.
struct FluxBlockContext {
  const PackedBatch* batch = nullptr;
  at::Tensor temb;              // [B, dim] conditioning
  RotaryTables text_rope;       // per text row
  RotaryTables image_rope;      // per carried image row
  RotaryTables stream_rope;     // text rows then image rows (single-stream blocks)
  at::Tensor stream_row_request;  // request index per row of the single stream
  std::vector<engine::TokenRouter*> routers;  // per request, may be null
};

// diffusers FeedForward(dim, activation "gelu-approximate"): net.0.proj -> GELU(tanh) -> net.2.
class FeedForwardImpl : public torch::nn::Module {
 public:
  FeedForwardImpl(int64_t dim, int64_t hidden_dim);
  at::Tensor forward(const at::Tensor& x) const;
  Linear projection_in{nullptr}, projection_out{nullptr};
};
TORCH_MODULE(FeedForward);

// diffusers Attention with FluxAttnProcessor2_0 weights (to_q/k/v, RMS qk-norm; optionally the
// text-stream add_*_proj and the to_out / to_add_out projections).
class FluxAttentionImpl : public torch::nn::Module {
 public:
  FluxAttentionImpl(int64_t dim, int64_t heads, int64_t head_dim, bool joint, bool with_output);
  int64_t heads;
  Linear to_q{nullptr}, to_k{nullptr}, to_v{nullptr};
  RMSNorm norm_q{nullptr}, norm_k{nullptr};
  Linear add_q_proj{nullptr}, add_k_proj{nullptr}, add_v_proj{nullptr}, to_add_out{nullptr};
  RMSNorm norm_added_q{nullptr}, norm_added_k{nullptr};
  torch::nn::ModuleList to_out{nullptr};
  Linear output_projection{nullptr};  // to_out.0
  // The same layers fused for wide products: image q/k/v, image k/v, text q/k/v.
  FusedLinear image_qkv, image_kv, text_qkv;
};
TORCH_MODULE(FluxAttention);

// RMS-normalises each head of x [rows, heads*head_dim].
at::Tensor per_head_rms_norm(const RMSNorm& norm, const at::Tensor& x, int64_t heads);

class FluxDoubleBlockImpl : public torch::nn::Module {
 public:
  FluxDoubleBlockImpl(int64_t dim, int64_t heads, int64_t head_dim);
  // Updates the packed text and image streams in place.
  void forward(int block_index, const FluxBlockContext& context, at::Tensor& text,
               at::Tensor& image) const;
  Linear norm1_linear{nullptr}, norm1_context_linear{nullptr};  // norm1.linear, norm1_context.linear
  FluxAttention attn{nullptr};
  FeedForward ff{nullptr}, ff_context{nullptr};
};
TORCH_MODULE(FluxDoubleBlock);

class FluxSingleBlockImpl : public torch::nn::Module {
 public:
  FluxSingleBlockImpl(int64_t dim, int64_t heads, int64_t head_dim);
  // stream: text rows [0, Nt) then image rows [Nt, Nt + Ni); updated in place.
  void forward(int block_index, const FluxBlockContext& context, at::Tensor& stream) const;
  Linear norm_linear{nullptr};  // norm.linear
  Linear proj_mlp{nullptr}, proj_out{nullptr};
  FluxAttention attn{nullptr};
  // q, k, v and the MLP input all read the same normalised rows: fused products.
  FusedLinear qkv_mlp, kv, q_mlp;
};
TORCH_MODULE(FluxSingleBlock);

}  // namespace flashps
