// Flux conditioning embeddings (time, guidance, pooled text) and the 3-axis rotary embedding.
#pragma once
#include <torch/nn/module.h>
#include <torch/nn/modules/container/any.h>

#include <vector>

#include "models/common/layers.h"

namespace flashps {

// Sinusoidal embedding of diffusers' get_timestep_embedding with flip_sin_to_cos=True,
// downscale_freq_shift=0: [cos, sin] of t * 10000^(-i/half). values: [B] -> [B, dim] float32.
at::Tensor sinusoidal_embedding(const at::Tensor& values, int64_t dim);

// linear_1 -> SiLU -> linear_2 (diffusers TimestepEmbedding and PixArtAlphaTextProjection).
class TwoLayerEmbeddingImpl : public torch::nn::Module {
 public:
  TwoLayerEmbeddingImpl(int64_t in, int64_t out);
  at::Tensor forward(const at::Tensor& x) const;
  Linear linear_1{nullptr}, linear_2{nullptr};
};
TORCH_MODULE(TwoLayerEmbedding);

// diffusers CombinedTimestep(Guidance)TextProjEmbeddings: "time_text_embed.*".
class FluxTimeTextEmbeddingImpl : public torch::nn::Module {
 public:
  FluxTimeTextEmbeddingImpl(int64_t inner_dim, int64_t pooled_dim, bool with_guidance);
  // timestep and guidance: [B] already multiplied by 1000; pooled: [B, pooled_dim].
  at::Tensor forward(const at::Tensor& timestep, const at::Tensor& guidance,
                     const at::Tensor& pooled) const;
  TwoLayerEmbedding timestep_embedder{nullptr}, guidance_embedder{nullptr}, text_embedder{nullptr};
};
TORCH_MODULE(FluxTimeTextEmbedding);

struct RotaryTables {
  // [S, head_dim / 2] float32: one angle per rotated pair (diffusers repeats each for both of the
  // pair's elements; keeping one halves what a serving step packs and every rotation reads).
  at::Tensor cos, sin;
};

// FluxPosEmbed (theta 10000): ids [S, axes] -> per-token tables, computed in float64 as diffusers.
RotaryTables flux_rotary_tables(const at::Tensor& ids, const std::vector<int64_t>& axes_dims);

// Applies interleaved-pair rotation to x [S, heads*head_dim] with tables [S, head_dim].
at::Tensor apply_rotary(const at::Tensor& x, const RotaryTables& tables, int64_t heads);

}  // namespace flashps
