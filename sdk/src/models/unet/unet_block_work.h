// The UNet's blocks as the mask-aware engine sees them, in execution order (down levels, middle,
// up levels), with the level (downsampling steps from the latent grid) whose token mask each
// uses, and its cost model:
// - one per BasicTransformerBlock (queries, MLP for masked tokens; models/unet/unet_blocks.h);
// - two per ResNet: its output, computed on the tiles the mask (grown by the 2-pixel reach of its
//   two 3x3 convolutions) touches, and its norm2 moments per tile, whose captured values for the
//   other tiles complete the whole map's statistics (models/unet/resnet_tiles.h).
// Samplers, conv in/out and the transformers' GroupNorm/projections stay dense.
#pragma once
#include <vector>

#include "engine/cost_model.h"
#include "engine/token_mask.h"
#include "models/unet/unet_config.h"

namespace flashps {

struct UNetBlockShape {
  enum class Kind { transformer, resnet, resnet_moments };
  Kind kind = Kind::transformer;
  int level = 0;        // the latent grid halved `level` times
  int64_t channels = 0;     // output channels
  int64_t in_channels = 0;  // ResNets: input channels (skip connections included)
  int64_t groups = 0;       // ResNets: norm2's groups
};

// Every routed block in execution order (what UNetRouting numbers).
std::vector<UNetBlockShape> unet_routed_blocks(const UNetConfig& config);
// The transformer blocks alone, in execution order.
std::vector<UNetBlockShape> unet_transformer_blocks(const UNetConfig& config);

// FLOPs per row and cached bytes per row of every routed block (text_tokens: the
// cross-attention context length; latent_side: the latent grid's side, which sets each level's
// tile size). A ResNet's cost is split between its two blocks: the output block's rows (pixels)
// pay conv2 and the shortcut, the moments block's rows (tiles) pay conv1 over the tile and its
// ring. A moments block computed in full (not from the cache) means conv1 over the whole map.
std::vector<engine::BlockWork> unet_block_work(const UNetConfig& config, int64_t text_tokens,
                                               int64_t bytes_per_value, int64_t latent_side = 64);

// FLOPs per latent-grid token of everything outside the routed blocks (samplers, conv in/out,
// the transformers' projections), which always runs dense.
double unet_dense_flops_per_latent_token(const UNetConfig& config);

// The UNet's cost per denoising step as a list of blocks over latent-grid rows, for the serving
// scheduler (whose requests count latent tokens): every transformer block rescaled to the
// latent grid (a block at level L sees 1/4^L of the rows), then one dense block (keys-only work
// over every row, nothing cached) for the rest.
std::vector<engine::BlockWork> unet_latent_grid_work(const UNetConfig& config, int64_t text_tokens,
                                                     int64_t bytes_per_value, int64_t latent_side = 64);

// Each routed block's token mask, repeated for `copies` images (classifier-free guidance):
// transformer blocks the latent mask max-pooled to their level; ResNets every pixel of the tiles
// that mask, grown by 2 pixels, touches (all pixels when the level's grid does not split into
// tiles); moments blocks those tiles (one row per tile, or one for the whole map).
std::vector<engine::TokenMask> unet_block_masks(const UNetConfig& config, const engine::TokenMask& latent_mask,
                                                int64_t copies);

}  // namespace flashps
