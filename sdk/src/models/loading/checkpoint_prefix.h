// One component of an all-in-one checkpoint: the original Stable Diffusion files hold the UNet
// under "model.diffusion_model.", the VAE under "first_stage_model.", the text encoders under
// "cond_stage_model." or "conditioner.embedders.N."; ComfyUI's Flux files under "vae.",
// "text_encoders.clip_l." and so on. Several components share the one opened file.
#pragma once
#include <memory>
#include <string>

#include "models/loading/checkpoint_tensors.h"

namespace flashps {

// The tensors of `file` whose keys start with `prefix`, under their keys with `prefix` removed
// (an empty prefix keeps every key). Reads and releases go to `file`, which the result shares.
// Throws NotFoundError naming the file and the prefix when no key starts with it.
std::unique_ptr<CheckpointTensors> tensors_under_prefix(std::shared_ptr<const CheckpointTensors> file,
                                                        const std::string& prefix);

}  // namespace flashps
