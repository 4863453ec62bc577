// SpatialSelfAttention: the VAE mid block's single-head attention over all latent pixels.
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "core/kernels/linear.h"
#include "models/vae/vae_blocks.h"

namespace flashps::vae {
namespace {

// Largest attention-score block materialised at once (elements). A 1024x1024 image has a 128x128
// latent, i.e. 16384 tokens, whose full score matrix would take 1 GiB in float32; query rows are
// processed in chunks instead (softmax is per row, so chunking does not change the result).
constexpr int64_t kScoreChunkElements = int64_t{32} << 20;

}  // namespace

SpatialSelfAttention::SpatialSelfAttention(int64_t channels, int64_t num_groups, double eps) {
  group_norm_ =
      register_module("group_norm", std::make_shared<GroupNormLayer>(num_groups, channels, eps));
  to_q_ = register_module("to_q", Linear(channels, channels));
  to_k_ = register_module("to_k", Linear(channels, channels));
  to_v_ = register_module("to_v", Linear(channels, channels));
  to_out_ = Linear(channels, channels);
  register_module_list(*this, "to_out", std::vector{to_out_});
}

at::Tensor SpatialSelfAttention::forward(const at::Tensor& input) const {
  const int64_t batch = input.size(0), channels = input.size(1);
  const int64_t height = input.size(2), width = input.size(3);
  const int64_t tokens = height * width;

  // Token-major [B, HW, C] so every product is a plain gemm (oneDNN for float32 via
  // core/kernels/linear.h). For channels-last activations (the VAE's layout) this is a free view; q, k
  // and v come from one gemm with the three weights stacked.
  at::Tensor normed =
      group_norm_->forward(input).reshape({batch, channels, tokens}).transpose(1, 2).contiguous();
  at::Tensor stacked_weight = at::cat({to_q_->dense_weight(), to_k_->dense_weight(), to_v_->dense_weight()}, 0);
  at::Tensor stacked_bias = at::cat({to_q_->bias, to_k_->bias, to_v_->bias}, 0);
  at::Tensor qkv = linear(normed, stacked_weight, stacked_bias);  // [B, HW, 3C]
  normed.reset();
  at::Tensor query = qkv.narrow(2, 0, channels) * (1.0 / std::sqrt(static_cast<double>(channels)));
  at::Tensor key = qkv.narrow(2, channels, channels).contiguous();
  at::Tensor value = qkv.narrow(2, 2 * channels, channels).contiguous();
  qkv.reset();

  // Reduced-precision scores are softmaxed in float32 (diffusers' upcast_softmax).
  const bool upcast_softmax =
      input.scalar_type() != at::kFloat && input.scalar_type() != at::kDouble;
  const int64_t chunk =
      std::max<int64_t>(1, kScoreChunkElements / std::max<int64_t>(1, batch * tokens));
  std::vector<at::Tensor> attended_chunks;
  for (int64_t start = 0; start < tokens; start += chunk) {
    const int64_t rows = std::min(chunk, tokens - start);
    at::Tensor scores = batched_matmul_transposed(query.narrow(1, start, rows), key);  // [B, n, HW]
    at::Tensor probabilities = upcast_softmax
                                   ? at::softmax(scores, -1, at::kFloat).to(input.scalar_type())
                                   : at::softmax(scores, -1);
    scores.reset();
    attended_chunks.push_back(batched_matmul(probabilities, value));  // [B, n, C]
  }
  at::Tensor attended =
      attended_chunks.size() == 1 ? attended_chunks.front() : at::cat(attended_chunks, 1);
  at::Tensor projected = to_out_->forward(attended);  // [B, HW, C]

  // The residual connection, in the input's memory format; the projection is read back into
  // [B, C, H, W] through a view (HW splits into H, W).
  at::Tensor output = input.clone();
  return output.add_(projected.transpose(1, 2).view({batch, channels, height, width}));
}

}  // namespace flashps::vae
