#include "models/clip/clip_text_model.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/container/modulelist.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "core/files/safetensors.h"
#include "models/loading/checkpoint_tensors.h"
#include "models/loading/config_checks.h"
#include "models/loading/weights.h"

namespace flashps {
namespace {

at::Tensor layer_norm(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, double eps) {
  return at::layer_norm(x, {x.size(-1)}, weight.to(x.scalar_type()), bias.to(x.scalar_type()), eps);
}

}  // namespace

struct ClipTextModelImpl::Layer {
  Linear q{nullptr}, k{nullptr}, v{nullptr}, out{nullptr}, fc1{nullptr}, fc2{nullptr};
  at::Tensor norm1_weight, norm1_bias, norm2_weight, norm2_bias;
};

ClipTextConfig parse_clip_text_config(const nlohmann::json& config, const std::string& source_name) {
  ClipTextConfig parsed;
  try {
    parsed.vocab_size = config.at("vocab_size").get<int64_t>();
    parsed.hidden_size = config.at("hidden_size").get<int64_t>();
    parsed.intermediate_size = config.at("intermediate_size").get<int64_t>();
    parsed.num_hidden_layers = config.at("num_hidden_layers").get<int64_t>();
    parsed.num_attention_heads = config.at("num_attention_heads").get<int64_t>();
    parsed.max_position_embeddings = config.value("max_position_embeddings", int64_t(77));
    parsed.hidden_act = config.value("hidden_act", std::string("quick_gelu"));
    parsed.layer_norm_eps = config.value("layer_norm_eps", 1e-5);
    parsed.eos_token_id = config.value("eos_token_id", int64_t(2));
    std::string class_name = config.value("_class_name", std::string());
    if (class_name.empty() && config.contains("architectures") && config["architectures"].is_array() &&
        !config["architectures"].empty())
      class_name = config["architectures"][0].get<std::string>();
    if (class_name == "CLIPTextModelWithProjection") parsed.projection_dim = config.value("projection_dim", int64_t(768));
  } catch (const nlohmann::json::exception& error) {
    throw Error(source_name + ": CLIP text config: " + error.what());
  }
  if (parsed.hidden_act != "quick_gelu" && parsed.hidden_act != "gelu")
    throw Error(source_name + ": hidden_act '" + parsed.hidden_act + "' is not supported (quick_gelu, gelu)");
  if (parsed.hidden_size <= 0 || parsed.num_attention_heads <= 0 || parsed.hidden_size % parsed.num_attention_heads)
    throw Error(source_name + ": hidden_size must be a positive multiple of num_attention_heads");
  // Bounds before anything is allocated from these numbers (OpenCLIP bigG: 1280 wide, 32 layers,
  // 5120 MLP, 49408 tokens).
  require_config_range(source_name, "vocab_size", parsed.vocab_size, 3, 1 << 20);
  require_config_range(source_name, "hidden_size", parsed.hidden_size, 1, 16384);
  require_config_range(source_name, "intermediate_size", parsed.intermediate_size, 1, 65536);
  require_config_range(source_name, "num_hidden_layers", parsed.num_hidden_layers, 2, 256);
  require_config_range(source_name, "num_attention_heads", parsed.num_attention_heads, 1, 1024);
  require_config_range(source_name, "max_position_embeddings", parsed.max_position_embeddings, 1, 65536);
  require_config_range(source_name, "eos_token_id", parsed.eos_token_id, 0, parsed.vocab_size - 1);
  require_config_range(source_name, "projection_dim", parsed.projection_dim, 0, 65536);
  return parsed;
}

ClipTextModelImpl::ClipTextModelImpl(ClipTextConfig config) : config_(std::move(config)) {
  const int64_t dim = config_.hidden_size;
  auto text_model = std::make_shared<PathNode>();
  auto embeddings = std::make_shared<PathNode>();
  auto token = std::make_shared<PathNode>(), position = std::make_shared<PathNode>();
  token_embedding_ = token->register_parameter("weight", at::empty({config_.vocab_size, dim}), false);
  position_embedding_ = position->register_parameter("weight", at::empty({config_.max_position_embeddings, dim}), false);
  embeddings->register_module("token_embedding", token);
  embeddings->register_module("position_embedding", position);
  text_model->register_module("embeddings", embeddings);
  auto encoder = std::make_shared<PathNode>();
  torch::nn::ModuleList layers;
  for (int64_t i = 0; i < config_.num_hidden_layers; ++i) {
    auto layer = std::make_shared<Layer>();
    auto node = std::make_shared<PathNode>(), attention = std::make_shared<PathNode>(), mlp = std::make_shared<PathNode>();
    auto norm1 = std::make_shared<PathNode>(), norm2 = std::make_shared<PathNode>();
    layer->q = attention->register_module("q_proj", Linear(dim, dim));
    layer->k = attention->register_module("k_proj", Linear(dim, dim));
    layer->v = attention->register_module("v_proj", Linear(dim, dim));
    layer->out = attention->register_module("out_proj", Linear(dim, dim));
    layer->fc1 = mlp->register_module("fc1", Linear(dim, config_.intermediate_size));
    layer->fc2 = mlp->register_module("fc2", Linear(config_.intermediate_size, dim));
    layer->norm1_weight = norm1->register_parameter("weight", at::empty({dim}), false);
    layer->norm1_bias = norm1->register_parameter("bias", at::empty({dim}), false);
    layer->norm2_weight = norm2->register_parameter("weight", at::empty({dim}), false);
    layer->norm2_bias = norm2->register_parameter("bias", at::empty({dim}), false);
    node->register_module("self_attn", attention);
    node->register_module("layer_norm1", norm1);
    node->register_module("mlp", mlp);
    node->register_module("layer_norm2", norm2);
    layers->push_back(node);
    layers_.push_back(layer);
  }
  encoder->register_module("layers", layers);
  text_model->register_module("encoder", encoder);
  auto final_norm = std::make_shared<PathNode>();
  final_norm_weight_ = final_norm->register_parameter("weight", at::empty({dim}), false);
  final_norm_bias_ = final_norm->register_parameter("bias", at::empty({dim}), false);
  text_model->register_module("final_layer_norm", final_norm);
  register_module("text_model", text_model);
  if (config_.projection_dim > 0)
    text_projection_ = register_module("text_projection", Linear(dim, config_.projection_dim, /*with_bias=*/false));
}

ClipTextOutput ClipTextModelImpl::forward(const at::Tensor& input_ids) const {
  at::NoGradGuard no_grad;
  if (input_ids.dim() != 2) throw Error("CLIP text model: input_ids must be [batch, length]");
  const int64_t batch = input_ids.size(0), length = input_ids.size(1);
  if (length < 1 || length > config_.max_position_embeddings)
    throw Error("CLIP text model: sequence length " + std::to_string(length) + " outside [1, " +
                std::to_string(config_.max_position_embeddings) + "]");
  const at::Tensor ids = input_ids.to(token_embedding_.device(), at::kLong);
  if (ids.min().item<int64_t>() < 0 || ids.max().item<int64_t>() >= config_.vocab_size)
    throw Error("CLIP text model: token id outside the vocabulary of " + std::to_string(config_.vocab_size));
  const int64_t dim = config_.hidden_size, heads = config_.num_attention_heads, head_dim = dim / heads;
  at::Tensor hidden = (token_embedding_.index_select(0, ids.reshape({-1})).reshape({batch, length, dim}) +
                       position_embedding_.narrow(0, 0, length).unsqueeze(0))
                          .to(at::kFloat);
  const at::Tensor causal =
      at::full({length, length}, -std::numeric_limits<float>::infinity(), hidden.options()).triu(1);
  ClipTextOutput output;
  for (size_t i = 0; i < layers_.size(); ++i) {
    const Layer& layer = *layers_[i];
    if (i + 1 == layers_.size()) output.penultimate = hidden;
    at::Tensor normed = layer_norm(hidden, layer.norm1_weight, layer.norm1_bias, config_.layer_norm_eps);
    auto split = [&](const at::Tensor& x) { return x.reshape({batch, length, heads, head_dim}).transpose(1, 2); };
    const at::Tensor q = split(layer.q->forward(normed) * (1.0 / std::sqrt(double(head_dim))));
    const at::Tensor k = split(layer.k->forward(normed)), v = split(layer.v->forward(normed));
    const at::Tensor weights = at::softmax(at::matmul(q, k.transpose(-1, -2)) + causal, -1);
    const at::Tensor attended = at::matmul(weights, v).transpose(1, 2).reshape({batch, length, dim});
    hidden = hidden + layer.out->forward(attended);
    normed = layer_norm(hidden, layer.norm2_weight, layer.norm2_bias, config_.layer_norm_eps);
    at::Tensor inner = layer.fc1->forward(normed);
    inner = config_.hidden_act == "quick_gelu" ? inner * at::sigmoid(1.702 * inner) : at::gelu(inner);
    hidden = hidden + layer.fc2->forward(inner);
  }
  output.last_hidden_state = layer_norm(hidden, final_norm_weight_, final_norm_bias_, config_.layer_norm_eps);
  // Legacy configs (eos id 2) pool at the first maximum id (the end token has the largest id).
  const at::Tensor positions = config_.eos_token_id == 2 ? ids.argmax(1)
                                                         : (ids == config_.eos_token_id).to(at::kInt).argmax(1);
  output.pooler_output = output.last_hidden_state.index({at::arange(batch, ids.options()), positions});
  if (text_projection_) output.text_embeds = text_projection_->forward(output.pooler_output);
  return output;
}

namespace {

// The weights' header must agree with the config's widths and layer count before the model is
// allocated (the head count leaves no trace in shapes; its bounds and divisibility are checked).
void check_config_against_weights(const ClipTextConfig& config, const std::string& source,
                                  const WeightShapes& weights) {
  const int64_t dim = config.hidden_size;
  weights.require_block_count(source, "num_hidden_layers", config.num_hidden_layers, "text_model.encoder.layers");
  weights.require_shape(source, "vocab_size and hidden_size", "text_model.embeddings.token_embedding.weight",
                        {config.vocab_size, dim});
  weights.require_shape(source, "max_position_embeddings and hidden_size",
                        "text_model.embeddings.position_embedding.weight", {config.max_position_embeddings, dim});
  weights.require_shape(source, "intermediate_size and hidden_size", "text_model.encoder.layers.0.mlp.fc1.weight",
                        {config.intermediate_size, dim});
  if (config.projection_dim > 0)
    weights.require_shape(source, "projection_dim and hidden_size", "text_projection.weight",
                          {config.projection_dim, dim});
}

}  // namespace

ClipTextModel load_clip_text_model(const std::string& dir, at::ScalarType dtype) {
  namespace fs = std::filesystem;
  const fs::path config_path = fs::path(dir) / "config.json";
  if (!fs::exists(config_path)) throw Error(dir + ": CLIP text encoder folder has no config.json");
  const ClipTextConfig config = parse_clip_text_config(read_json_file(config_path.string()), config_path.string());
  fs::path weights = fs::path(dir) / "model.safetensors";
  if (!fs::exists(weights)) weights = fs::path(dir) / "diffusion_pytorch_model.safetensors";
  if (!fs::exists(weights)) throw Error(dir + ": CLIP text encoder folder has no model.safetensors");
  return load_clip_text_model(*safetensors_tensors({SafetensorsFile::open(weights.string())}), config,
                              config_path.string(), dtype);
}

ClipTextModel load_clip_text_model(const CheckpointTensors& weights, const ClipTextConfig& config,
                                   const std::string& config_source, at::ScalarType dtype,
                                   const WeightLoadOptions& base_options) {
  check_config_against_weights(config, config_source, WeightShapes(weights));
  ClipTextModel model(config);
  WeightLoadOptions options = base_options;
  options.dtype = dtype;
  options.ignored_keys.push_back("text_model.embeddings.position_ids");
  load_weights_strict(*model, weights, options);
  prefer_fast_linear_layout(*model);
  return model;
}

}  // namespace flashps
