#include "models/random/random_tensors.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "models/flux/flux_transformer.h"
#include "models/t5/t5_encoder_model.h"
#include "models/unet/unet_config.h"
#include "models/unet/unet_model.h"
#include "models/vae/autoencoder_kl.h"

namespace flashps {
namespace {

// FNV-1a: a tensor's seed must not depend on the standard library's std::hash.
uint64_t random_key_hash(const std::string& key) {
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : key) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

TensorShapes random_shapes_of(torch::nn::Module& module) {
  TensorShapes shapes;
  for (const auto& item : module.named_parameters(true)) shapes[item.key()] = item.value().sizes().vec();
  return shapes;
}

// Block 0's keys under `blocks` ("transformer_blocks.") repeated for blocks 1 .. count - 1; keys
// containing `first_only` stay in block 0 alone (T5 keeps its position bias in the first block).
void repeat_first_block(TensorShapes& shapes, const std::string& blocks, int64_t count,
                        const std::string& first_only = "") {
  const std::string first = blocks + "0.";
  TensorShapes added;
  for (const auto& [key, shape] : shapes) {
    if (key.compare(0, first.size(), first) != 0) continue;
    if (!first_only.empty() && key.find(first_only) != std::string::npos) continue;
    for (int64_t i = 1; i < count; ++i) added[blocks + std::to_string(i) + "." + key.substr(first.size())] = shape;
  }
  shapes.insert(added.begin(), added.end());
}

}  // namespace

at::Tensor random_weight(const std::string& key, const std::vector<int64_t>& shape, uint64_t seed) {
  auto generator = at::detail::createCPUGenerator(seed ^ random_key_hash(key));
  at::Tensor values = at::empty(shape, at::TensorOptions().dtype(at::kFloat));
  const bool is_bias = key.size() >= 4 && key.compare(key.size() - 4, 4, "bias") == 0;
  if (shape.size() == 1 && !is_bias) {
    values.normal_(1.0, 0.1, generator);
  } else if (is_bias || shape.size() < 2) {
    values.normal_(0.0, 0.05, generator);
  } else {
    const double fan_in = double(values.numel() / shape[0]);
    values.normal_(0.0, std::clamp(1.0 / std::sqrt(fan_in), 0.02, 0.2), generator);
  }
  return values;
}

TensorShapes flux_transformer_shapes(const FluxConfig& config) {
  // Built one block type at a time: a FLUX.1-size double block alone is 1.4 GB in float32.
  FluxConfig double_only = config, single_only = config;
  double_only.num_layers = std::min<int64_t>(config.num_layers, 1);
  double_only.num_single_layers = 0;
  single_only.num_layers = 0;
  single_only.num_single_layers = std::min<int64_t>(config.num_single_layers, 1);
  TensorShapes shapes;
  {
    FluxTransformer model(double_only);
    shapes = random_shapes_of(*model);
  }
  {
    FluxTransformer model(single_only);
    const TensorShapes single = random_shapes_of(*model);
    shapes.insert(single.begin(), single.end());
  }
  repeat_first_block(shapes, "transformer_blocks.", config.num_layers);
  repeat_first_block(shapes, "single_transformer_blocks.", config.num_single_layers);
  return shapes;
}

TensorShapes clip_text_shapes(const ClipTextConfig& config) {
  ClipTextConfig one = config;
  one.num_hidden_layers = std::min<int64_t>(config.num_hidden_layers, 1);
  ClipTextModel model(one);
  TensorShapes shapes = random_shapes_of(*model);
  repeat_first_block(shapes, "text_model.encoder.layers.", config.num_hidden_layers);
  return shapes;
}

TensorShapes t5_encoder_shapes(const T5Config& config) {
  T5Config one = config;
  one.num_layers = std::min<int64_t>(config.num_layers, 1);
  T5EncoderModel model(one);
  TensorShapes shapes = random_shapes_of(*model);
  repeat_first_block(shapes, "encoder.block.", config.num_layers, "relative_attention_bias");
  return shapes;
}

TensorShapes unet_shapes(const nlohmann::json& config, const std::string& source) {
  // Allocated whole (SD 1.5's 860M parameters: 3.4 GB for a moment); its levels differ, so there
  // is no block to repeat.
  UNet2DConditionModel model(parse_unet_config(config, source));
  return random_shapes_of(*model);
}

TensorShapes autoencoder_kl_shapes(const nlohmann::json& config, const std::string& source) {
  AutoencoderKL model(parse_autoencoder_kl_config(config, source));
  return random_shapes_of(model);
}

int64_t parameter_count(const TensorShapes& shapes) {
  int64_t count = 0;
  for (const auto& [key, shape] : shapes) {
    int64_t elements = 1;
    for (int64_t extent : shape) elements *= extent;
    count += elements;
  }
  return count;
}

}  // namespace flashps
