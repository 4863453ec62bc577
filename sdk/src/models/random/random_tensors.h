// Random-weight models tensor by tensor, for models too large to hold: each tensor's values come
// from its key and the seed alone (fill_random_weights' recipe: norm scales ~ 1 + 0.1 N(0,1),
// biases ~ 0.05 N(0,1), matrices ~ N(0, s^2), s = clamp(1/sqrt(fan_in), 0.02, 0.2)), so the same
// model written as a folder, a single file or a GGUF holds the same weights; and the keys and
// shapes of a component come from an instance one block deep, its blocks repeated.
#pragma once
#include <ATen/Tensor.h>
#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "models/clip/clip_text_model.h"
#include "models/flux/flux_config.h"
#include "models/random/random_layouts.h"
#include "models/t5/t5_config.h"

namespace flashps {

// The values of the tensor `key` (a float32 CPU tensor of `shape`) of the component seeded `seed`.
at::Tensor random_weight(const std::string& key, const std::vector<int64_t>& shape, uint64_t seed);

// The parameter keys and shapes of each component at its full size, without allocating it.
TensorShapes flux_transformer_shapes(const FluxConfig& config);
TensorShapes clip_text_shapes(const ClipTextConfig& config);
TensorShapes t5_encoder_shapes(const T5Config& config);
TensorShapes unet_shapes(const nlohmann::json& config, const std::string& source);
TensorShapes autoencoder_kl_shapes(const nlohmann::json& config, const std::string& source);

// Parameters of all shapes together.
int64_t parameter_count(const TensorShapes& shapes);

}  // namespace flashps
