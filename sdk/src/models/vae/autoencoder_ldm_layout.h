// The original latent-diffusion (LDM) key layout of an AutoencoderKL, as single-file Stable
// Diffusion checkpoints store it under "first_stage_model." and Black Forest Labs' ae.safetensors
// without a prefix (encoder.down.N.block.M, mid.block_1, mid.attn_1.q, decoder.up.N, norm_out),
// as diffusers' AutoencoderKL keys: the one table for this layout, after diffusers'
// convert_ldm_vae_checkpoint (the single-file fixtures' key_map.json is its output).
#pragma once
#include "models/loading/key_layout.h"
#include "models/vae/autoencoder_kl_config.h"

namespace flashps {

// True when `stored` (its component prefix already removed) holds an autoencoder in LDM keys.
bool has_ldm_autoencoder_keys(const CheckpointTensors& stored);

// The layout of every LDM autoencoder key of `stored`: the decoder's up levels are numbered from
// the lowest resolution in diffusers and from the highest in LDM (up.N is up_blocks[levels-1-N],
// levels from the config); the mid-block attention's q, k, v and proj_out are stored as 1x1
// convolutions (diffusers: linear layers); nin_shortcut is conv_shortcut. Keys the table does not
// know stay unmapped, so the loader names them.
KeyLayout autoencoder_ldm_layout(const CheckpointTensors& stored, const AutoencoderKLConfig& config);

}  // namespace flashps
