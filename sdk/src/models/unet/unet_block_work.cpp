#include "models/unet/unet_block_work.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "models/unet/resnet_tiles.h"

namespace flashps {

std::vector<UNetBlockShape> unet_routed_blocks(const UNetConfig& config) {
  using Kind = UNetBlockShape::Kind;
  std::vector<UNetBlockShape> blocks;
  const auto& channels = config.block_out_channels;
  const int levels = static_cast<int>(channels.size());
  auto transformers = [&](int level, int64_t width, int64_t layers) {
    for (int64_t k = 0; k < layers; ++k) blocks.push_back({Kind::transformer, level, width, width, 0});
  };
  auto resnet = [&](int level, int64_t in, int64_t out) {
    blocks.push_back({Kind::resnet, level, out, in, config.norm_num_groups});
    blocks.push_back({Kind::resnet_moments, level, out, in, config.norm_num_groups});
  };
  // The same walk as UNet2DConditionModelImpl's constructor and forward.
  std::vector<int64_t> skips{channels[0]};
  int64_t output = channels[0];
  for (int i = 0; i < levels; ++i) {
    const int64_t input = output;
    output = channels[i];
    for (int64_t j = 0; j < config.layers_per_block; ++j) {
      resnet(i, j == 0 ? input : output, output);
      if (config.has_cross_attention(i)) transformers(i, output, config.transformer_layers[i]);
      skips.push_back(output);
    }
    if (i + 1 < levels) skips.push_back(output);
  }
  resnet(levels - 1, channels.back(), channels.back());
  transformers(levels - 1, channels.back(), config.transformer_layers.back());  // mid block
  resnet(levels - 1, channels.back(), channels.back());
  int64_t previous = channels.back();
  for (int i = 0; i < levels; ++i) {
    const int level = levels - 1 - i;
    const int64_t out = channels[level];
    for (int64_t j = 0; j <= config.layers_per_block; ++j) {
      const int64_t skip = skips.back();
      skips.pop_back();
      resnet(level, (j == 0 ? previous : out) + skip, out);
      if (config.up_block_types[i] == "CrossAttnUpBlock2D") transformers(level, out, config.reverse_transformer_layers[i]);
    }
    previous = out;
  }
  return blocks;
}

std::vector<UNetBlockShape> unet_transformer_blocks(const UNetConfig& config) {
  std::vector<UNetBlockShape> transformers;
  for (const UNetBlockShape& block : unet_routed_blocks(config))
    if (block.kind == UNetBlockShape::Kind::transformer) transformers.push_back(block);
  return transformers;
}

std::vector<engine::BlockWork> unet_block_work(const UNetConfig& config, int64_t text_tokens,
                                               int64_t bytes_per_value, int64_t latent_side) {
  std::vector<engine::BlockWork> work;
  for (const UNetBlockShape& block : unet_routed_blocks(config)) {
    const double dim = double(block.channels);
    engine::BlockWork w;
    if (block.kind == UNetBlockShape::Kind::resnet) {
      // Per computed pixel: conv2 and the shortcut; its output row is what a replay loads for
      // the pixels it does not compute.
      const double in = double(block.in_channels);
      w.flops_per_query_row = 2.0 * 9.0 * dim * dim + (block.in_channels != block.channels ? 2.0 * in * dim : 0.0);
      w.cached_bytes_per_row_kv = w.cached_bytes_per_row_hidden = dim * double(bytes_per_value);
      work.push_back(w);
      continue;
    }
    if (block.kind == UNetBlockShape::Kind::resnet_moments) {
      // Per tile: conv1 over the tile and its 1-pixel ring (one row for the whole map where the
      // level does not split into tiles); two moments per group are what a replay loads.
      const int64_t side = std::max<int64_t>(1, latent_side >> block.level);
      const int64_t tile = unet::resnet_tile_side(side, side);
      const double pixels = tile > 0 ? double((tile + 2) * (tile + 2)) : double(side * side);
      w.flops_per_query_row = 2.0 * 9.0 * double(block.in_channels) * dim * pixels;
      w.cached_bytes_per_row_kv = w.cached_bytes_per_row_hidden = 2.0 * double(block.groups) * double(bytes_per_value);
      work.push_back(w);
      continue;
    }
    // Per computed row: to_q, to_out (self), to_q, to_out (cross), GEGLU 8*dim^2 + out 4*dim^2,
    // and attention over the text tokens; per key row: to_k and to_v of the self-attention.
    w.flops_per_query_row = 2.0 * 16.0 * dim * dim + 2.0 * 2.0 * dim * double(text_tokens);
    w.flops_per_key_row = 2.0 * 2.0 * dim * dim;
    w.flops_per_query_key = 2.0 * 2.0 * dim;
    w.cached_bytes_per_row_kv = 2.0 * dim * double(bytes_per_value);
    w.cached_bytes_per_row_hidden = dim * double(bytes_per_value);
    work.push_back(w);
  }
  return work;
}

double unet_dense_flops_per_latent_token(const UNetConfig& config) {
  const auto& channels = config.block_out_channels;
  const int levels = static_cast<int>(channels.size());
  auto at_level = [](int level) { return 1.0 / double(int64_t(1) << (2 * level)); };  // rows per latent token
  auto conv3 = [](double in, double out) { return 2.0 * 9.0 * in * out; };
  auto projections = [](int64_t width) { return 2.0 * 2.0 * double(width) * double(width); };
  double flops = conv3(double(config.in_channels), double(channels[0])) +  // conv_in, conv_out
                 conv3(double(channels[0]), double(config.out_channels));
  for (int i = 0; i < levels; ++i) {
    if (config.has_cross_attention(i))
      flops += at_level(i) * double(config.layers_per_block) * projections(channels[i]);
    if (i + 1 < levels) flops += at_level(i + 1) * conv3(double(channels[i]), double(channels[i]));  // downsampler
  }
  flops += at_level(levels - 1) * projections(channels.back());  // mid block
  for (int i = 0; i < levels; ++i) {
    const int level = levels - 1 - i;
    if (config.up_block_types[i] == "CrossAttnUpBlock2D")
      flops += at_level(level) * double(config.layers_per_block + 1) * projections(channels[level]);
    if (i + 1 < levels) flops += at_level(level - 1) * conv3(double(channels[level]), double(channels[level]));  // upsampler
  }
  return flops;
}

std::vector<engine::BlockWork> unet_latent_grid_work(const UNetConfig& config, int64_t text_tokens,
                                                     int64_t bytes_per_value, int64_t latent_side) {
  std::vector<engine::BlockWork> work = unet_block_work(config, text_tokens, bytes_per_value, latent_side);
  const auto shapes = unet_routed_blocks(config);
  for (size_t i = 0; i < work.size(); ++i) {
    // Block rows per latent token (a moments block's rows are tiles, or one for the whole map).
    double rows = 1.0 / double(int64_t(1) << (2 * shapes[i].level));
    if (shapes[i].kind == UNetBlockShape::Kind::resnet_moments) {
      const int64_t side = std::max<int64_t>(1, latent_side >> shapes[i].level);
      const int64_t tile = unet::resnet_tile_side(side, side);
      rows = tile > 0 ? rows / double(tile * tile) : 1.0 / double(latent_side * latent_side);
    }
    work[i].flops_per_query_row *= rows;
    work[i].flops_per_key_row *= rows;
    work[i].flops_per_query_key *= rows * rows;
    work[i].cached_bytes_per_row_kv *= rows;
    work[i].cached_bytes_per_row_hidden *= rows;
  }
  engine::BlockWork dense;
  dense.flops_per_key_row = unet_dense_flops_per_latent_token(config);
  work.push_back(dense);
  return work;
}

namespace {

// Above this share of tiles a ResNet runs dense: the tiles' halos and gathers cost more than the
// few tiles they skip (measured on SD 2 inpainting at 512², benchmarks/README.md).
constexpr double kMaxTiledShare = 0.6;

// Pixels of the tiles that `mask` grown by `reach` pixels touches, and those tiles; every pixel
// (dense) when the grid does not split into tiles or too many tiles are touched.
std::pair<engine::TokenMask, engine::TokenMask> resnet_masks(const engine::TokenMask& mask, int64_t reach) {
  const int64_t height = mask.grid_height, width = mask.grid_width;
  const int64_t tile = unet::resnet_tile_side(height, width);
  const auto dense = [&](int64_t tile_rows, int64_t tile_cols) {
    return std::make_pair(engine::token_mask_from_grid(at::ones({height, width}, at::kBool)),
                          engine::token_mask_from_grid(at::ones({tile_rows, tile_cols}, at::kBool)));
  };
  if (tile == 0) return dense(1, 1);
  const at::Tensor grid = mask.masked.to(at::kCPU).view({1, 1, height, width}).to(at::kFloat);
  const at::Tensor grown = at::max_pool2d(grid, {2 * reach + 1, 2 * reach + 1}, {1, 1}, {reach, reach});
  const at::Tensor tiles = at::max_pool2d(grown, {tile, tile}, {tile, tile});
  if (tiles.mean().item<double>() > kMaxTiledShare) return dense(height / tile, width / tile);
  const at::Tensor pixels = tiles.repeat_interleave(tile, 2).repeat_interleave(tile, 3);
  return {engine::token_mask_from_grid(pixels.view({height, width}) > 0.5),
          engine::token_mask_from_grid(tiles.view({height / tile, width / tile}) > 0.5)};
}

}  // namespace

std::vector<engine::TokenMask> unet_block_masks(const UNetConfig& config, const engine::TokenMask& latent_mask,
                                                int64_t copies) {
  std::vector<engine::TokenMask> per_level{latent_mask};
  for (size_t level = 1; level < config.block_out_channels.size(); ++level)
    per_level.push_back(engine::halve_token_mask(per_level.back()));
  std::vector<engine::TokenMask> transformer_masks, resnet_pixels, resnet_tiles;
  for (const engine::TokenMask& level_mask : per_level) {
    transformer_masks.push_back(engine::repeat_token_mask(level_mask, copies));
    const auto [pixels, tiles] = resnet_masks(level_mask, 2);  // two 3x3 convolutions reach 2 pixels
    resnet_pixels.push_back(engine::repeat_token_mask(pixels, copies));
    resnet_tiles.push_back(engine::repeat_token_mask(tiles, copies));
  }
  std::vector<engine::TokenMask> masks;
  for (const UNetBlockShape& block : unet_routed_blocks(config)) {
    switch (block.kind) {
      case UNetBlockShape::Kind::transformer: masks.push_back(transformer_masks[block.level]); break;
      case UNetBlockShape::Kind::resnet: masks.push_back(resnet_pixels[block.level]); break;
      case UNetBlockShape::Kind::resnet_moments: masks.push_back(resnet_tiles[block.level]); break;
    }
  }
  return masks;
}

}  // namespace flashps
