// Black Forest Labs' key layout of Flux checkpoints (flux1-fill-dev.safetensors, ComfyUI's and
// stable-diffusion.cpp's GGUF files: double_blocks.N.img_attn.qkv, single_blocks.N.linear1, ...)
// as diffusers' FluxTransformer2DModel keys: the one table for this layout, after diffusers'
// convert_flux_transformer_checkpoint_to_diffusers (the fixture's key_map.json is its output).
#pragma once
#include <string>

#include "models/loading/key_layout.h"

namespace flashps {

// True when `stored` holds a Flux transformer in BFL keys under `prefix` ("" or
// "model.diffusion_model.").
bool has_flux_bfl_keys(const CheckpointTensors& stored, const std::string& prefix = "");

// The layout of every BFL key under `prefix` (the inner width comes from img_in's rows; q, k, v
// and the single blocks' MLP input are rows of one stored matrix; final_layer's modulation stores
// shift before scale, diffusers scale before shift). Keys it does not know stay unmapped, so the
// loader names them.
KeyLayout flux_bfl_layout(const CheckpointTensors& stored, const std::string& prefix = "");

}  // namespace flashps
