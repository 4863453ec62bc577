#include "models/flux/flux_embeddings.h"

#include <ATen/ATen.h>

#include <cmath>

#include "core/kernels/fast_kernels.h"

namespace flashps {

at::Tensor sinusoidal_embedding(const at::Tensor& values, int64_t dim) {
  const int64_t half = dim / 2;
  at::Tensor exponent =
      -std::log(10000.0) * at::arange(half, values.options().dtype(at::kFloat)) / double(half);
  at::Tensor angles = values.to(at::kFloat).unsqueeze(1) * at::exp(exponent).unsqueeze(0);
  at::Tensor embedding = at::cat({at::cos(angles), at::sin(angles)}, 1);
  if (dim % 2 == 1) embedding = at::constant_pad_nd(embedding, {0, 1});
  return embedding;
}

TwoLayerEmbeddingImpl::TwoLayerEmbeddingImpl(int64_t in, int64_t out) {
  linear_1 = register_module("linear_1", Linear(in, out));
  linear_2 = register_module("linear_2", Linear(out, out));
}

at::Tensor TwoLayerEmbeddingImpl::forward(const at::Tensor& x) const {
  return linear_2->forward(at::silu(linear_1->forward(x)));
}

FluxTimeTextEmbeddingImpl::FluxTimeTextEmbeddingImpl(int64_t inner_dim, int64_t pooled_dim,
                                                     bool with_guidance) {
  timestep_embedder = register_module("timestep_embedder", TwoLayerEmbedding(256, inner_dim));
  if (with_guidance)
    guidance_embedder = register_module("guidance_embedder", TwoLayerEmbedding(256, inner_dim));
  text_embedder = register_module("text_embedder", TwoLayerEmbedding(pooled_dim, inner_dim));
}

at::Tensor FluxTimeTextEmbeddingImpl::forward(const at::Tensor& timestep,
                                              const at::Tensor& guidance,
                                              const at::Tensor& pooled) const {
  const auto dtype = pooled.scalar_type();
  at::Tensor embedding = timestep_embedder->forward(sinusoidal_embedding(timestep, 256).to(dtype));
  if (guidance_embedder && guidance.defined())
    embedding = embedding + guidance_embedder->forward(sinusoidal_embedding(guidance, 256).to(dtype));
  return embedding + text_embedder->forward(pooled);
}

RotaryTables flux_rotary_tables(const at::Tensor& ids, const std::vector<int64_t>& axes_dims) {
  at::Tensor positions = ids.to(at::kDouble);
  std::vector<at::Tensor> cos_parts, sin_parts;
  for (size_t axis = 0; axis < axes_dims.size(); ++axis) {
    const int64_t dim = axes_dims[axis];
    at::Tensor frequencies =
        1.0 / at::pow(10000.0, at::arange(0, dim, 2, positions.options()) / double(dim));
    at::Tensor angles = at::outer(positions.select(1, axis), frequencies);  // [S, dim/2]
    cos_parts.push_back(at::cos(angles).to(at::kFloat));
    sin_parts.push_back(at::sin(angles).to(at::kFloat));
  }
  return {at::cat(cos_parts, 1).contiguous(), at::cat(sin_parts, 1).contiguous()};
}

at::Tensor apply_rotary(const at::Tensor& x, const RotaryTables& tables, int64_t heads) {
  if (fast_kernels_apply(x)) return fast_rotary(x, tables.cos, tables.sin, heads);
  const int64_t rows = x.size(0);
  const int64_t pairs = tables.cos.size(1), head_dim = 2 * pairs;
  at::Tensor x32 = x.to(at::kFloat).view({rows, heads, pairs, 2});
  at::Tensor real = x32.select(3, 0), imaginary = x32.select(3, 1);
  at::Tensor cos = tables.cos.unsqueeze(1), sin = tables.sin.unsqueeze(1);
  at::Tensor out = at::stack({real * cos - imaginary * sin, imaginary * cos + real * sin}, 3);
  return out.view({rows, heads * head_dim}).to(x.scalar_type());
}

}  // namespace flashps
