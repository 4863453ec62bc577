// The UNet's transformer blocks as the mask-aware engine sees them: one entry per
// BasicTransformerBlock in execution order (down levels, middle, up levels), with the level
// (downsampling steps from the latent grid) whose token mask it uses, and its cost model.
// ResNets, samplers and the transformers' GroupNorm/projections stay dense and are not blocks.
#pragma once
#include <vector>

#include "engine/cost_model.h"
#include "engine/token_mask.h"
#include "models/unet/unet_config.h"

namespace flashps {

struct UNetBlockShape {
  int level = 0;        // the latent grid halved `level` times
  int64_t channels = 0;
};

std::vector<UNetBlockShape> unet_transformer_blocks(const UNetConfig& config);

// FLOPs per row and cached bytes per row of every transformer block (text_tokens: the
// cross-attention context length).
std::vector<engine::BlockWork> unet_block_work(const UNetConfig& config, int64_t text_tokens,
                                               int64_t bytes_per_value);

// FLOPs per latent-grid token of everything outside the transformer blocks (ResNets, samplers,
// conv in/out, the transformers' projections), which always runs dense.
double unet_dense_flops_per_latent_token(const UNetConfig& config);

// The UNet's cost per denoising step as a list of blocks over latent-grid rows, for the serving
// scheduler (whose requests count latent tokens): every transformer block rescaled to the
// latent grid (a block at level L sees 1/4^L of the rows), then one dense block (keys-only work
// over every row, nothing cached) for the rest.
std::vector<engine::BlockWork> unet_latent_grid_work(const UNetConfig& config, int64_t text_tokens,
                                                     int64_t bytes_per_value);

// The latent-grid token mask at every level a block uses (level 0 = the latent grid itself),
// each repeated for `copies` images (classifier-free guidance).
std::vector<engine::TokenMask> unet_block_masks(const UNetConfig& config, const engine::TokenMask& latent_mask,
                                                int64_t copies);

}  // namespace flashps
