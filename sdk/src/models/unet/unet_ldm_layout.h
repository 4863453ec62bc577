// The original Stable Diffusion (LDM / SGM) key layout of a UNet, as single-file SD 1.x, 2.x and
// XL checkpoints store it under "model.diffusion_model." (input_blocks.N.M, middle_block.M,
// output_blocks.N.M, time_embed, SDXL's label_emb, out), as diffusers' UNet2DConditionModel keys:
// the one table for this layout, after diffusers' convert_ldm_unet_checkpoint (the single-file
// fixtures' key_map.json is its output).
#pragma once
#include "models/loading/key_layout.h"
#include "models/unet/unet_config.h"

namespace flashps {

// True when `stored` (its component prefix already removed) holds a UNet in LDM keys.
bool has_ldm_unet_keys(const CheckpointTensors& stored);

// The layout of every LDM UNet key of `stored`. The block numbering follows from the config: each
// down level holds layers_per_block input blocks (a resnet, then a transformer where the level
// has cross-attention) and, except the last, one downsampler block; each up level holds
// layers_per_block + 1 output blocks, the last of them ending in the upsampler. Keys the table
// does not know stay unmapped, so the loader names them.
KeyLayout unet_ldm_layout(const CheckpointTensors& stored, const UNetConfig& config);

}  // namespace flashps
