// The key layouts CLIP text encoders come in, as Hugging Face CLIPTextModel keys: Hugging Face's
// own (single-file SD 1.x's cond_stage_model.transformer.text_model.*, SDXL's first embedder,
// ComfyUI's clip_l.safetensors), possibly under "transformer.", and OpenCLIP's (SD 2.x's
// cond_stage_model.model.*, SDXL's conditioner.embedders.1.model.*: transformer.resblocks.N with
// q, k and v stacked in in_proj, text_projection stored transposed). After diffusers'
// convert_ldm_clip_checkpoint and convert_open_clip_checkpoint.
#pragma once
#include <set>
#include <string>

#include "models/clip/clip_text_model.h"
#include "models/loading/key_layout.h"

namespace flashps {

struct ClipTextLayout {
  std::string name;               // "Hugging Face CLIP", "OpenCLIP"
  KeyLayout layout;               // model key -> stored tensor
  std::set<std::string> dropped;  // stored keys the model does not use
};

// True when `stored` (its component prefix already removed) holds an OpenCLIP text tower.
bool has_open_clip_keys(const CheckpointTensors& stored);

// The layout of `stored` in either layout. Dropped, as diffusers drops them: position_ids
// buffers, logit_scale, OpenCLIP's attn_mask, text_projection when the config has no projection,
// and layers beyond the config's num_hidden_layers in OpenCLIP files (SD 2.x's encoder uses 23
// of the 24 stored). Keys it does not know stay unmapped, so the loader names them.
ClipTextLayout clip_text_layout(const CheckpointTensors& stored, const ClipTextConfig& config);

}  // namespace flashps
