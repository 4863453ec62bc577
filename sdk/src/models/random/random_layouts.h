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

}  // namespace flashps
