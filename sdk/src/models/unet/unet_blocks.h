// Building blocks of diffusers' UNet2DConditionModel (resnet.py, attention.py,
// transformer_2d.py) with parameter names equal to checkpoint keys. ResNets and samplers use
// the leaf layers of models/common/image_layers.h (Conv2dLayer, GroupNormLayer).
#pragma once
#include <ATen/Tensor.h>
#include <torch/nn/module.h>

#include <memory>
#include <vector>

#include "engine/token_router.h"
#include "models/common/layers.h"
#include "models/common/image_layers.h"

namespace flashps::unet {

// A batch's way through the UNet's routed blocks for the mask-aware engine: which batch rows
// belong to which request (a request has 2 rows under classifier-free guidance) and that
// request's router (null: plain computation). Blocks are numbered in execution order across
// the UNet (unet_block_work.h): one per BasicTransformerBlock, two per ResNet.
struct UNetRouting {
  struct Request {
    int64_t first_row = 0, rows = 1;
    engine::TokenRouter* router = nullptr;
  };
  std::vector<Request> requests;
  int next_block = 0;  // advanced by every routed block
};

// norm1 -> SiLU -> conv1 -> + time_emb_proj(SiLU(temb)) -> norm2 -> SiLU -> conv2, + shortcut.
class TimeResnetBlock : public torch::nn::Module {
 public:
  TimeResnetBlock(int64_t in_channels, int64_t out_channels, int64_t time_channels, int64_t groups, double eps);
  at::Tensor forward(const at::Tensor& input, const at::Tensor& temb) const;

  // What norm2 normalises: conv1(silu(norm1(x))) + time_emb_proj(silu(temb)), [B, out, H, W].
  // Its per-tile moments (resnet_tiles.h) are what a template capture records for tiled replay.
  at::Tensor pre_norm2(const at::Tensor& input, const at::Tensor& temb) const;
  // The output on tiles only, [B * n, out, tile, tile] image-major (resnet_tiles.h): norm1 over
  // the whole input, conv1 on each tile and a 1-pixel ring (input read with a 2-pixel halo),
  // norm2 with the given whole-map statistics ([B, groups] mean and variance, which the tiles
  // alone cannot know), conv2 and the shortcut on the cores. Equals forward() on those tiles
  // when the statistics are forward's own.
  at::Tensor forward_tiles(const at::Tensor& input, const at::Tensor& temb, int64_t tile,
                           const at::Tensor& tile_indices, const at::Tensor& norm2_mean,
                           const at::Tensor& norm2_variance) const;
  // Mask-aware: two routed blocks (output, then norm2 moments per tile; unet_block_work.h). A
  // request replaying both computes only its tiles, completing norm2's statistics with the
  // template's moments of the other tiles and its output with the template's rows; otherwise it
  // runs dense (and records output and moments when its router captures).
  at::Tensor forward_routed(const at::Tensor& input, const at::Tensor& temb, UNetRouting& routing) const;

 private:
  at::Tensor tile_pre_norm2(const at::Tensor& input, const at::Tensor& temb, int64_t tile,
                            const at::Tensor& tile_indices) const;  // [B * n, out, tile + 2, tile + 2]
  at::Tensor finish_tiles(const at::Tensor& pre_norm2_tiles, const at::Tensor& input, int64_t tile,
                          const at::Tensor& tile_indices, const at::Tensor& norm2_mean,
                          const at::Tensor& norm2_variance) const;
  at::Tensor finish(const at::Tensor& input, const at::Tensor& pre_norm2) const;  // dense

  std::shared_ptr<GroupNormLayer> norm1_, norm2_;
  std::shared_ptr<Conv2dLayer> conv1_, conv2_, conv_shortcut_;
  Linear time_emb_proj_{nullptr};
};

class LayerNormLayer : public torch::nn::Module {
 public:
  LayerNormLayer(int64_t dim, double eps);
  at::Tensor forward(const at::Tensor& input) const;

 private:
  at::Tensor weight_, bias_;
  double eps_;
};

// diffusers Attention: to_q/to_k/to_v without bias, to_out.0 with bias; keys/values from
// `context` (cross-attention) or the input itself.
class AttentionLayer : public torch::nn::Module {
 public:
  AttentionLayer(int64_t query_dim, int64_t context_dim, int64_t heads, int64_t head_dim);
  at::Tensor forward(const at::Tensor& input, const at::Tensor& context) const;  // [B, N, C]

 private:
  Linear to_q_{nullptr}, to_k_{nullptr}, to_v_{nullptr}, to_out_{nullptr};
  int64_t heads_, head_dim_;
};

// BasicTransformerBlock: self-attention, cross-attention, GEGLU feed-forward, each pre-LN with
// a residual.
class TransformerBlock : public torch::nn::Module {
 public:
  TransformerBlock(int64_t dim, int64_t heads, int64_t head_dim, int64_t context_dim);
  at::Tensor forward(const at::Tensor& input, const at::Tensor& context) const;
  // Mask-aware: input [copies, tokens, dim] of one request whose copies share a token mask.
  // Queries, cross-attention and the feed-forward run for `tokens.query_rows` only (indices
  // into the copies' rows one after another; keys/values still cover every token); the other
  // rows take `tokens.replaced_values` (or keep the input when there are none).
  at::Tensor forward_masked(const at::Tensor& input, const at::Tensor& context,
                            const engine::BlockTokens& tokens) const;

 private:
  std::shared_ptr<LayerNormLayer> norm1_, norm2_, norm3_;
  std::shared_ptr<AttentionLayer> attn1_, attn2_;
  Linear geglu_proj_{nullptr}, ff_out_{nullptr};  // ff.net.0.proj, ff.net.2
};

// Transformer2DModel (continuous input): GroupNorm (eps 1e-6), proj_in (1x1 conv, or linear
// after flattening with use_linear_projection), transformer blocks, proj_out, residual.
class SpatialTransformer : public torch::nn::Module {
 public:
  SpatialTransformer(int64_t channels, int64_t heads, int64_t layers, int64_t context_dim, int64_t groups,
                     bool linear_projection);
  // routing: null, or the batch's routing (mask-aware replay or capture per request).
  at::Tensor forward(const at::Tensor& input, const at::Tensor& context, UNetRouting* routing = nullptr) const;
  size_t block_count() const { return blocks_.size(); }

 private:
  at::Tensor routed_block(const TransformerBlock& block, const at::Tensor& hidden, const at::Tensor& context,
                          UNetRouting& routing) const;

  std::shared_ptr<GroupNormLayer> norm_;
  std::shared_ptr<Conv2dLayer> proj_in_conv_, proj_out_conv_;
  Linear proj_in_linear_{nullptr}, proj_out_linear_{nullptr};
  std::vector<std::shared_ptr<TransformerBlock>> blocks_;
};

// Downsample2D (use_conv, padding 1): a stride-2 3x3 conv.
class Downsampler : public torch::nn::Module {
 public:
  explicit Downsampler(int64_t channels);
  at::Tensor forward(const at::Tensor& input) const;

 private:
  std::shared_ptr<Conv2dLayer> conv_;
};

// Upsample2D: nearest-neighbour to `size` (x2 by default), then a 3x3 conv.
class Upsampler : public torch::nn::Module {
 public:
  explicit Upsampler(int64_t channels);
  at::Tensor forward(const at::Tensor& input, at::IntArrayRef size) const;

 private:
  std::shared_ptr<Conv2dLayer> conv_;
};

// diffusers get_timestep_embedding (max period 10000, scale 1).
at::Tensor timestep_embedding(const at::Tensor& timesteps, int64_t dim, bool flip_sin_to_cos, double freq_shift);

}  // namespace flashps::unet
