// The key layouts random-weight models are written in, built from the model's own keys and shapes
// (there is no stored file yet): the stored keys are enumerated here, the mapping itself comes
// from the layout table the loader reads with, so writing and reading cannot disagree.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "models/flux/flux_config.h"
#include "models/loading/key_layout.h"

namespace flashps {

using TensorShapes = std::map<std::string, std::vector<int64_t>>;

// Black Forest Labs' layout of a Flux transformer with `model_shapes` (diffusers keys), stored
// keys under `prefix` ("" or "model.diffusion_model."): flux_bfl_layout over BFL's key names.
KeyLayout flux_bfl_layout_for_writing(const FluxConfig& config, const TensorShapes& model_shapes,
                                      const std::string& prefix = "");

// The original latent-diffusion (LDM) layout of an AutoencoderKL with `model_shapes` (diffusers
// keys) and `levels` resolution levels, as ae.safetensors and single-file checkpoints store it:
// encoder.down.N.block.M, nin_shortcut, downsample / upsample, decoder.up numbered from the highest
// resolution, mid.block_1/2, mid.attn_1.{norm,q,k,v,proj_out} with q/k/v/proj_out as 1x1
// convolution kernels, norm_out. The inverse of the layouts branch's autoencoder_ldm_layout (the
// test checks the two agree when both exist).
KeyLayout autoencoder_ldm_layout_for_writing(const TensorShapes& model_shapes, int64_t levels);

// The original LDM layout of a UNet2DConditionModel with `model_shapes` (diffusers keys), as
// Stable Diffusion single files store it under "model.diffusion_model.": input_blocks.K.{0,1}
// (K = level * (layers + 1) + layer + 1; the level's downsampler at (level + 1) * (layers + 1),
// "op"), middle_block.{0,1,2}, output_blocks.K.{0,1,1|2} (the upsampler after the attention when
// the level has one), time_embed, label_emb (SDXL), out; resnets in_layers / emb_layers /
// out_layers / skip_connection. Layers per level are counted from the keys.
KeyLayout unet_ldm_layout_for_writing(const TensorShapes& model_shapes);

// OpenCLIP's layout of a CLIPTextModelWithProjection with `model_shapes` (transformers keys), as
// SDXL single files store the second text encoder under "conditioner.embedders.1.model.":
// transformer.resblocks.N (attn.in_proj = q, k, v on rows; ln_1, ln_2, mlp.c_fc, mlp.c_proj),
// token_embedding, positional_embedding, ln_final, text_projection stored transposed.
KeyLayout open_clip_layout_for_writing(const TensorShapes& model_shapes);

}  // namespace flashps
