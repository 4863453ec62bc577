#include "models/unet/unet_blocks.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/container/modulelist.h>

#include <cmath>
#include <set>
#include <tuple>

#include "core/kernels/attention.h"
#include "core/diagnostics/error.h"
#include "models/unet/resnet_tiles.h"

namespace flashps::unet {
TimeResnetBlock::TimeResnetBlock(int64_t in_channels, int64_t out_channels, int64_t time_channels, int64_t groups,
                                 double eps) {
  norm1_ = register_module("norm1", std::make_shared<GroupNormLayer>(groups, in_channels, eps));
  conv1_ = register_module("conv1", std::make_shared<Conv2dLayer>(in_channels, out_channels, 3, 1, 1));
  time_emb_proj_ = register_module("time_emb_proj", Linear(time_channels, out_channels));
  norm2_ = register_module("norm2", std::make_shared<GroupNormLayer>(groups, out_channels, eps));
  conv2_ = register_module("conv2", std::make_shared<Conv2dLayer>(out_channels, out_channels, 3, 1, 1));
  if (in_channels != out_channels)
    conv_shortcut_ = register_module("conv_shortcut", std::make_shared<Conv2dLayer>(in_channels, out_channels, 1));
}

at::Tensor TimeResnetBlock::pre_norm2(const at::Tensor& input, const at::Tensor& temb) const {
  at::Tensor hidden = conv1_->forward(norm1_->forward_silu(input));
  return hidden + time_emb_proj_->forward(at::silu(temb)).unsqueeze(-1).unsqueeze(-1);
}

at::Tensor TimeResnetBlock::finish(const at::Tensor& input, const at::Tensor& pre_norm2) const {
  const at::Tensor hidden = conv2_->forward(norm2_->forward_silu(pre_norm2));
  return (conv_shortcut_ ? conv_shortcut_->forward(input) : input) + hidden;
}

at::Tensor TimeResnetBlock::forward(const at::Tensor& input, const at::Tensor& temb) const {
  return finish(input, pre_norm2(input, temb));
}

at::Tensor TimeResnetBlock::tile_pre_norm2(const at::Tensor& input, const at::Tensor& temb, int64_t tile,
                                           const at::Tensor& tile_indices) const {
  // conv1's zero padding is the zero halo beyond the map; its outputs cover the tile and a ring.
  const at::Tensor activated = norm1_->forward_silu(input);
  const at::Tensor hidden = conv1_->forward_padded(gather_tiles(activated, tile, tile_indices, 2), 0);
  return hidden +
         time_emb_proj_->forward(at::silu(temb)).repeat_interleave(tile_indices.numel(), 0).unsqueeze(-1).unsqueeze(-1);
}

at::Tensor TimeResnetBlock::forward_tiles(const at::Tensor& input, const at::Tensor& temb, int64_t tile,
                                          const at::Tensor& tile_indices, const at::Tensor& norm2_mean,
                                          const at::Tensor& norm2_variance) const {
  return finish_tiles(tile_pre_norm2(input, temb, tile, tile_indices), input, tile, tile_indices, norm2_mean,
                      norm2_variance);
}

at::Tensor TimeResnetBlock::finish_tiles(const at::Tensor& pre_norm2_tiles, const at::Tensor& input, int64_t tile,
                                         const at::Tensor& tile_indices, const at::Tensor& norm2_mean,
                                         const at::Tensor& norm2_variance) const {
  const int64_t batch = input.size(0), count = tile_indices.numel();
  at::Tensor hidden = at::silu(norm2_->forward_with_statistics(pre_norm2_tiles, norm2_mean.repeat_interleave(count, 0),
                                                    norm2_variance.repeat_interleave(count, 0)));
  // conv2 pads with zeros too: ring pixels beyond the map are zero, not conv1 of the halo.
  hidden = hidden * tile_inside_map(input.size(2), input.size(3), tile, tile_indices, 1)
                        .to(hidden.scalar_type())
                        .repeat({batch, 1, 1, 1});
  hidden = conv2_->forward_padded(hidden, 0);
  const at::Tensor cores = gather_tiles(input, tile, tile_indices, 0);
  return (conv_shortcut_ ? conv_shortcut_->forward(cores) : cores) + hidden;
}

namespace {

// norm2 moments per tile [B, tiles, 2 * groups] of a dense pre-norm2 map, or one whole-map
// "tile" when the map does not split into tiles.
at::Tensor dense_moments(const at::Tensor& pre_norm2, int64_t groups, int64_t tile) {
  if (tile > 0) return tile_group_moments(pre_norm2, groups, tile);
  const at::Tensor grouped = pre_norm2.to(at::kFloat).reshape({pre_norm2.size(0), 1, groups, -1});
  return at::cat({grouped.mean(-1), grouped.square().mean(-1)}, -1);
}

// The tiles (sorted indices) holding the given pixels (row-major indices into a width-wide map).
at::Tensor tiles_of_pixels(const at::Tensor& pixels, int64_t width, int64_t tile) {
  const at::Tensor indices = pixels.to(at::kCPU, at::kLong).contiguous();
  std::set<int64_t> tiles;
  const int64_t* pixel = indices.data_ptr<int64_t>();
  for (int64_t i = 0; i < indices.numel(); ++i)
    tiles.insert((pixel[i] / width / tile) * (width / tile) + (pixel[i] % width) / tile);
  return at::tensor(std::vector<int64_t>(tiles.begin(), tiles.end()), at::kLong);
}

// [B, C, H, W] <-> token rows [B * H * W, C] (the row order of captures).
at::Tensor to_rows(const at::Tensor& map) { return map.permute({0, 2, 3, 1}).reshape({-1, map.size(1)}); }

}  // namespace

at::Tensor TimeResnetBlock::forward_routed(const at::Tensor& input, const at::Tensor& temb, UNetRouting& routing) const {
  const int output_block = routing.next_block++, moments_block = routing.next_block++;
  const size_t count = routing.requests.size();
  std::vector<engine::BlockTokens> outputs(count), moments(count);
  bool any_router = false;
  for (size_t r = 0; r < count; ++r) {
    engine::TokenRouter* router = routing.requests[r].router;
    if (!router) continue;
    any_router = true;
    outputs[r] = router->before_block(output_block);
    moments[r] = router->before_block(moments_block);
  }
  if (!any_router) return forward(input, temb);
  const int64_t height = input.size(2), width = input.size(3), groups = norm2_->groups();
  const int64_t tile = resnet_tile_side(height, width);
  const int64_t tiles = tile > 0 ? (height / tile) * (width / tile) : 1;
  std::vector<at::Tensor> parts;
  for (size_t r = 0; r < count; ++r) {
    const UNetRouting::Request& request = routing.requests[r];
    const at::Tensor rows = input.narrow(0, request.first_row, request.rows);
    const at::Tensor request_temb = temb.narrow(0, request.first_row, request.rows);
    const int64_t copies = request.rows;
    const engine::BlockTokens& out_tokens = outputs[r];
    const engine::BlockTokens& moment_tokens = moments[r];
    // The output from the cache for pixels outside the computed tiles (a level that does not
    // split into tiles, or a mask touching most tiles, computes every pixel: dense).
    const bool tiled = tile > 0 && out_tokens.query_rows.defined() &&
                       out_tokens.query_rows.numel() < copies * height * width;
    at::Tensor out;
    if (tiled) {
      // The copies share one mask: copy 0's computed tiles are every copy's.
      const at::Tensor computed = tiles_of_pixels(out_tokens.query_rows.narrow(0, 0, out_tokens.query_rows.numel() / copies),
                                                  width, tile);
      at::Tensor patches, mean, variance;
      if (moment_tokens.replaced_rows.defined() && moment_tokens.query_rows.defined()) {
        // conv1 on the computed tiles only; norm2's statistics from their moments and the
        // template's moments of the other tiles.
        patches = tile_pre_norm2(rows, request_temb, tile, computed);
        const at::Tensor cores = patches.narrow(2, 1, tile).narrow(3, 1, tile);
        const at::Tensor fresh = cores.to(at::kFloat).reshape({copies, computed.numel(), groups, -1});
        at::Tensor all_moments = at::empty({copies * tiles, 2 * groups}, at::TensorOptions().dtype(at::kFloat));
        all_moments.index_copy_(0, moment_tokens.query_rows.to(at::kLong),
                                at::cat({fresh.mean(-1), fresh.square().mean(-1)}, -1).reshape({-1, 2 * groups}));
        all_moments.index_copy_(0, moment_tokens.replaced_rows.to(at::kLong),
                                moment_tokens.replaced_values.to(at::kFloat));
        std::tie(mean, variance) = combine_tile_moments(all_moments.view({copies, tiles, 2 * groups}));
      } else {  // the plan computes the moments: conv1 over the whole map, exact statistics
        const at::Tensor hidden = pre_norm2(rows, request_temb);
        std::tie(mean, variance) = combine_tile_moments(tile_group_moments(hidden, groups, tile));
        patches = gather_tiles(hidden, tile, computed, 1);
      }
      const at::Tensor computed_cores = finish_tiles(patches, rows, tile, computed, mean, variance);
      out = at::empty({copies, computed_cores.size(1), height, width}, computed_cores.options());
      scatter_tiles(out, computed_cores, tile, computed);
      at::Tensor out_rows = to_rows(out).contiguous();
      out_rows.index_copy_(0, out_tokens.replaced_rows, out_tokens.replaced_values.to(out_rows.scalar_type()));
      out = out_rows.view({copies, height, width, -1}).permute({0, 3, 1, 2}).contiguous();
    } else {
      const at::Tensor hidden = pre_norm2(rows, request_temb);
      out = finish(rows, hidden);
      if (out_tokens.replaced_rows.defined() && out_tokens.replaced_rows.numel() > 0) {
        at::Tensor out_rows = to_rows(out).contiguous();
        out_rows.index_copy_(0, out_tokens.replaced_rows, out_tokens.replaced_values.to(out_rows.scalar_type()));
        out = out_rows.view({copies, height, width, -1}).permute({0, 3, 1, 2}).contiguous();
      }
      if (request.router && request.router->wants_block_output(moments_block))
        request.router->record_block_output(moments_block,
                                            dense_moments(hidden, groups, tile).reshape({copies * tiles, 2 * groups}));
    }
    if (request.router && request.router->wants_block_output(output_block))
      request.router->record_block_output(output_block, to_rows(out));
    parts.push_back(out);
  }
  return parts.size() == 1 ? parts[0] : at::cat(parts);
}

LayerNormLayer::LayerNormLayer(int64_t dim, double eps) : eps_(eps) {
  weight_ = register_parameter("weight", at::empty({dim}), false);
  bias_ = register_parameter("bias", at::empty({dim}), false);
}

at::Tensor LayerNormLayer::forward(const at::Tensor& input) const {
  if (input.scalar_type() != weight_.scalar_type())  // mixed precision (bfloat16 weights, float32 activations)
    return at::layer_norm(input, {input.size(-1)}, weight_.to(input.scalar_type()), bias_.to(input.scalar_type()), eps_);
  return at::layer_norm(input, {input.size(-1)}, weight_, bias_, eps_);
}

AttentionLayer::AttentionLayer(int64_t query_dim, int64_t context_dim, int64_t heads, int64_t head_dim)
    : heads_(heads), head_dim_(head_dim) {
  const int64_t inner = heads * head_dim;
  to_q_ = register_module("to_q", Linear(query_dim, inner, false));
  to_k_ = register_module("to_k", Linear(context_dim, inner, false));
  to_v_ = register_module("to_v", Linear(context_dim, inner, false));
  torch::nn::ModuleList to_out;
  to_out_ = Linear(inner, query_dim);
  to_out->push_back(to_out_);
  register_module("to_out", to_out);
}

at::Tensor AttentionLayer::forward(const at::Tensor& input, const at::Tensor& context) const {
  const at::Tensor& source = context.defined() ? context : input;
  const at::Tensor q = to_q_->forward(input), k = to_k_->forward(source), v = to_v_->forward(source);
  // Token-major attention per image: one head's score matrix at a time, never all heads'
  // (at 768 px an SD 1.5 UNet attends over 9216 tokens).
  std::vector<at::Tensor> rows;
  const bool bf16_products = to_q_->weight_dtype() == at::kBFloat16;  // as the projections run
  for (int64_t b = 0; b < input.size(0); ++b)
    rows.push_back(token_major_attention(q[b], {k[b]}, {v[b]}, heads_, {}, bf16_products));
  return to_out_->forward(at::stack(rows));
}

TransformerBlock::TransformerBlock(int64_t dim, int64_t heads, int64_t head_dim, int64_t context_dim) {
  norm1_ = register_module("norm1", std::make_shared<LayerNormLayer>(dim, 1e-5));
  attn1_ = register_module("attn1", std::make_shared<AttentionLayer>(dim, dim, heads, head_dim));
  norm2_ = register_module("norm2", std::make_shared<LayerNormLayer>(dim, 1e-5));
  attn2_ = register_module("attn2", std::make_shared<AttentionLayer>(dim, context_dim, heads, head_dim));
  norm3_ = register_module("norm3", std::make_shared<LayerNormLayer>(dim, 1e-5));
  // ff.net = [GEGLU(proj), Dropout, Linear]
  const int64_t inner = 4 * dim;
  auto ff = std::make_shared<PathNode>();
  auto geglu = std::make_shared<PathNode>();
  geglu_proj_ = geglu->register_module("proj", Linear(dim, 2 * inner));
  ff_out_ = Linear(inner, dim);
  torch::nn::ModuleList net;
  net->push_back(geglu);
  net->push_back(EmptySlot());
  net->push_back(ff_out_);
  ff->register_module("net", net);
  register_module("ff", ff);
}

at::Tensor TransformerBlock::forward(const at::Tensor& input, const at::Tensor& context) const {
  at::Tensor hidden = input + attn1_->forward(norm1_->forward(input), at::Tensor());
  hidden = hidden + attn2_->forward(norm2_->forward(hidden), context);
  const auto parts = geglu_proj_->forward(norm3_->forward(hidden)).chunk(2, -1);
  return hidden + ff_out_->forward(parts[0] * at::gelu(parts[1]));
}

at::Tensor TransformerBlock::forward_masked(const at::Tensor& input, const at::Tensor& context,
                                            const engine::BlockTokens& tokens) const {
  const int64_t copies = input.size(0), token_count = input.size(1), dim = input.size(2);
  const int64_t computed = tokens.query_rows.numel();
  if (computed % copies)
    throw Error("UNet: the copies of a request must share one token mask (" + std::to_string(computed) +
                " query rows over " + std::to_string(copies) + " copies)");
  // Copy 0's rows; every copy has the same ones.
  const at::Tensor rows = tokens.query_rows.narrow(0, 0, computed / copies);
  const at::Tensor normed = norm1_->forward(input);  // keys and values over every token
  at::Tensor hidden = input.index_select(1, rows) + attn1_->forward(normed.index_select(1, rows), normed);
  hidden = hidden + attn2_->forward(norm2_->forward(hidden), context);
  const auto parts = geglu_proj_->forward(norm3_->forward(hidden)).chunk(2, -1);
  hidden = hidden + ff_out_->forward(parts[0] * at::gelu(parts[1]));

  at::Tensor output = tokens.replaced_rows.defined() ? at::empty({copies * token_count, dim}, input.options())
                                                     : input.reshape({copies * token_count, dim}).clone();
  output.index_copy_(0, tokens.query_rows, hidden.reshape({-1, dim}));
  if (tokens.replaced_rows.defined())
    output.index_copy_(0, tokens.replaced_rows, tokens.replaced_values.to(input.scalar_type()));
  return output.view({copies, token_count, dim});
}

SpatialTransformer::SpatialTransformer(int64_t channels, int64_t heads, int64_t layers, int64_t context_dim,
                                       int64_t groups, bool linear_projection) {
  norm_ = register_module("norm", std::make_shared<GroupNormLayer>(groups, channels, 1e-6));
  if (linear_projection) proj_in_linear_ = register_module("proj_in", Linear(channels, channels));
  else proj_in_conv_ = register_module("proj_in", std::make_shared<Conv2dLayer>(channels, channels, 1));
  torch::nn::ModuleList list;
  for (int64_t i = 0; i < layers; ++i) {
    blocks_.push_back(std::make_shared<TransformerBlock>(channels, heads, channels / heads, context_dim));
    list->push_back(blocks_.back());
  }
  register_module("transformer_blocks", list);
  if (linear_projection) proj_out_linear_ = register_module("proj_out", Linear(channels, channels));
  else proj_out_conv_ = register_module("proj_out", std::make_shared<Conv2dLayer>(channels, channels, 1));
}

at::Tensor SpatialTransformer::routed_block(const TransformerBlock& block, const at::Tensor& hidden,
                                            const at::Tensor& context, UNetRouting& routing) const {
  const int index = routing.next_block++;
  std::vector<engine::BlockTokens> tokens(routing.requests.size());
  bool any_masked = false;
  for (size_t r = 0; r < routing.requests.size(); ++r) {
    if (!routing.requests[r].router) continue;
    tokens[r] = routing.requests[r].router->before_block(index);
    any_masked = any_masked || tokens[r].query_rows.defined();
  }
  at::Tensor output;
  if (!any_masked) {
    output = block.forward(hidden, context);
  } else {  // requests with different masks: each its own call
    std::vector<at::Tensor> parts;
    for (size_t r = 0; r < routing.requests.size(); ++r) {
      const auto& request = routing.requests[r];
      const at::Tensor rows = hidden.narrow(0, request.first_row, request.rows);
      const at::Tensor request_context = context.narrow(0, request.first_row, request.rows);
      parts.push_back(tokens[r].query_rows.defined() ? block.forward_masked(rows, request_context, tokens[r])
                                                      : block.forward(rows, request_context));
    }
    output = at::cat(parts);
  }
  for (const auto& request : routing.requests) {
    if (!request.router || !request.router->wants_block_output(index)) continue;
    request.router->record_block_output(
        index, output.narrow(0, request.first_row, request.rows).reshape({-1, output.size(2)}));
  }
  return output;
}

at::Tensor SpatialTransformer::forward(const at::Tensor& input, const at::Tensor& context,
                                       UNetRouting* routing) const {
  const int64_t batch = input.size(0), channels = input.size(1), height = input.size(2), width = input.size(3);
  at::Tensor hidden = norm_->forward(input);
  auto to_tokens = [&](const at::Tensor& x) { return x.permute({0, 2, 3, 1}).reshape({batch, height * width, channels}); };
  auto to_image = [&](const at::Tensor& x) {
    return x.reshape({batch, height, width, channels}).permute({0, 3, 1, 2}).contiguous();
  };
  hidden = proj_in_linear_ ? proj_in_linear_->forward(to_tokens(hidden)) : to_tokens(proj_in_conv_->forward(hidden));
  for (const auto& block : blocks_)
    hidden = routing ? routed_block(*block, hidden, context, *routing) : block->forward(hidden, context);
  hidden = proj_out_linear_ ? to_image(proj_out_linear_->forward(hidden)) : proj_out_conv_->forward(to_image(hidden));
  return hidden + input;
}

Downsampler::Downsampler(int64_t channels) {
  conv_ = register_module("conv", std::make_shared<Conv2dLayer>(channels, channels, 3, 2, 1));
}

at::Tensor Downsampler::forward(const at::Tensor& input) const { return conv_->forward(input); }

Upsampler::Upsampler(int64_t channels) {
  conv_ = register_module("conv", std::make_shared<Conv2dLayer>(channels, channels, 3, 1, 1));
}

at::Tensor Upsampler::forward(const at::Tensor& input, at::IntArrayRef size) const {
  return conv_->forward(at::upsample_nearest2d(input, size));
}

at::Tensor timestep_embedding(const at::Tensor& timesteps, int64_t dim, bool flip_sin_to_cos, double freq_shift) {
  const int64_t half = dim / 2;
  const at::Tensor exponent =
      -std::log(10000.0) * at::arange(0, half, at::TensorOptions().dtype(at::kFloat)) / (double(half) - freq_shift);
  const at::Tensor arguments = timesteps.to(at::kFloat).unsqueeze(1) * at::exp(exponent).unsqueeze(0);
  at::Tensor embedding = at::cat({at::sin(arguments), at::cos(arguments)}, -1);
  if (flip_sin_to_cos) embedding = at::cat({embedding.narrow(1, half, half), embedding.narrow(1, 0, half)}, -1);
  if (dim % 2) embedding = at::constant_pad_nd(embedding, {0, 1});
  return embedding;
}

}  // namespace flashps::unet
