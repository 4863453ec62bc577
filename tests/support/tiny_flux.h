// Tiny Flux transformer configs for tests: 2 heads, text and pooled widths of two heads, RoPE
// axes splitting the head as diffusers' [16, 56, 56] does for 128.
#pragma once
#include "models/flux/flux_config.h"

namespace flashps::test {

inline FluxConfig tiny_flux_config(int64_t channels, int64_t head_dim, int64_t double_blocks,
                                   int64_t single_blocks) {
  FluxConfig config;
  config.in_channels = channels;
  config.out_channels = channels;
  config.num_layers = double_blocks;
  config.num_single_layers = single_blocks;
  config.attention_head_dim = head_dim;
  config.num_attention_heads = 2;
  config.joint_attention_dim = 2 * head_dim;
  config.pooled_projection_dim = 2 * head_dim;
  config.axes_dims_rope = {head_dim / 4, head_dim / 4, head_dim / 2};
  return config;
}

}  // namespace flashps::test
