// Opening one model file as users keep them: a .safetensors file (any key layout; the family's
// table maps it) or a .gguf file. Pickled checkpoints (.ckpt, .pt, .pth, .bin) are refused:
// loading a pickle runs code from the file.
#pragma once
#include <memory>
#include <string>

#include "models/loading/checkpoint_tensors.h"

namespace flashps {

// The file's tensors under their stored keys. Recognised by content (GGUF's magic, else
// safetensors), so a misnamed file still opens; errors name the file and say what it looks like.
std::unique_ptr<CheckpointTensors> open_checkpoint_file(const std::string& path);

// Throws UnsupportedError saying why and what to convert with when `path` is a pickled PyTorch
// checkpoint, by its name (.ckpt, .pt, .pth, .bin) or its content (a zip archive, as torch.save
// writes, or a raw pickle stream), however it is named.
void refuse_pickled_checkpoint(const std::string& path);

}  // namespace flashps
