// Which pipeline a diffusers model folder needs, decided from its files before loading anything.
#pragma once
#include <string>

namespace flashps {

enum class ModelFamily { flux, stable_diffusion };
const char* model_family_name(ModelFamily family);  // "Flux", "Stable Diffusion"

// Stable Diffusion when model_index.json names a StableDiffusion* pipeline (SDInpaintPipeline),
// Flux when the folder has transformer/config.json (FluxInpaintPipeline). NotFoundError when the
// folder does not exist or holds neither, UnsupportedError for another pipeline class,
// CorruptDataError for an unreadable model_index.json.
ModelFamily detect_model_family(const std::string& dir);

}  // namespace flashps
