#include "models/unet/unet_block_work.h"

namespace flashps {

std::vector<UNetBlockShape> unet_transformer_blocks(const UNetConfig& config) {
  std::vector<UNetBlockShape> blocks;
  const auto& channels = config.block_out_channels;
  const int levels = static_cast<int>(channels.size());
  auto add = [&](int level, int64_t width, int64_t layers) {
    for (int64_t k = 0; k < layers; ++k) blocks.push_back({level, width});
  };
  for (int i = 0; i < levels; ++i)
    if (config.has_cross_attention(i))
      for (int64_t j = 0; j < config.layers_per_block; ++j) add(i, channels[i], config.transformer_layers[i]);
  add(levels - 1, channels.back(), config.transformer_layers.back());  // mid block
  for (int i = 0; i < levels; ++i)
    if (config.up_block_types[i] == "CrossAttnUpBlock2D")
      for (int64_t j = 0; j <= config.layers_per_block; ++j)
        add(levels - 1 - i, channels[levels - 1 - i], config.reverse_transformer_layers[i]);
  return blocks;
}

std::vector<engine::BlockWork> unet_block_work(const UNetConfig& config, int64_t text_tokens,
                                               int64_t bytes_per_value) {
  std::vector<engine::BlockWork> work;
  for (const UNetBlockShape& block : unet_transformer_blocks(config)) {
    const double dim = double(block.channels);
    engine::BlockWork w;
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
  double flops = 0;
  auto at_level = [](int level) { return 1.0 / double(int64_t(1) << (2 * level)); };  // rows per latent token
  auto conv3 = [](double in, double out) { return 2.0 * 9.0 * in * out; };
  auto resnet = [&](double in, double out) { return conv3(in, out) + conv3(out, out) + (in != out ? 2.0 * in * out : 0.0); };
  auto projections = [&](int64_t width) { return 2.0 * 2.0 * double(width) * double(width); };
  flops += conv3(double(config.in_channels), double(channels[0]));
  std::vector<int64_t> skips{channels[0]};
  int64_t output = channels[0];
  for (int i = 0; i < levels; ++i) {
    const int64_t input = output;
    output = channels[i];
    for (int64_t j = 0; j < config.layers_per_block; ++j) {
      flops += at_level(i) * resnet(double(j == 0 ? input : output), double(output));
      if (config.has_cross_attention(i)) flops += at_level(i) * projections(output);
      skips.push_back(output);
    }
    if (i + 1 < levels) {
      flops += at_level(i + 1) * conv3(double(output), double(output));
      skips.push_back(output);
    }
  }
  flops += at_level(levels - 1) * (2 * resnet(double(channels.back()), double(channels.back())) + projections(channels.back()));
  int64_t previous = channels.back();
  for (int i = 0; i < levels; ++i) {
    const int level = levels - 1 - i;
    const int64_t out = channels[level];
    for (int64_t j = 0; j <= config.layers_per_block; ++j) {
      const int64_t skip = skips.back();
      skips.pop_back();
      flops += at_level(level) * resnet(double((j == 0 ? previous : out) + skip), double(out));
      if (config.up_block_types[i] == "CrossAttnUpBlock2D") flops += at_level(level) * projections(out);
    }
    if (i + 1 < levels) flops += at_level(level - 1) * conv3(double(out), double(out));
    previous = out;
  }
  flops += conv3(double(channels[0]), double(config.out_channels));
  return flops;
}

std::vector<engine::BlockWork> unet_latent_grid_work(const UNetConfig& config, int64_t text_tokens,
                                                     int64_t bytes_per_value) {
  std::vector<engine::BlockWork> work = unet_block_work(config, text_tokens, bytes_per_value);
  const auto shapes = unet_transformer_blocks(config);
  for (size_t i = 0; i < work.size(); ++i) {
    const double rows = 1.0 / double(int64_t(1) << (2 * shapes[i].level));  // block rows per latent token
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

std::vector<engine::TokenMask> unet_block_masks(const UNetConfig& config, const engine::TokenMask& latent_mask,
                                                int64_t copies) {
  std::vector<engine::TokenMask> per_level{engine::repeat_token_mask(latent_mask, copies)};
  engine::TokenMask level_mask = latent_mask;
  for (size_t level = 1; level < config.block_out_channels.size(); ++level) {
    level_mask = engine::halve_token_mask(level_mask);
    per_level.push_back(engine::repeat_token_mask(level_mask, copies));
  }
  std::vector<engine::TokenMask> masks;
  for (const UNetBlockShape& block : unet_transformer_blocks(config)) masks.push_back(per_level[block.level]);
  return masks;
}

}  // namespace flashps
