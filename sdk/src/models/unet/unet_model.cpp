#include "models/unet/unet_model.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/container/modulelist.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "core/diagnostics/error.h"
#include "models/unet/unet_block_work.h"

namespace flashps {
namespace {

template <typename Child>
void register_list(torch::nn::Module& parent, const std::string& name, const std::vector<std::shared_ptr<Child>>& children) {
  torch::nn::ModuleList list;
  for (const auto& child : children) list->push_back(child);
  parent.register_module(name, list);
}

}  // namespace

struct UNet2DConditionModelImpl::DownBlock : torch::nn::Module {
  std::vector<std::shared_ptr<unet::TimeResnetBlock>> resnets;
  std::vector<std::shared_ptr<unet::SpatialTransformer>> attentions;
  std::shared_ptr<unet::Downsampler> downsampler;
};

struct UNet2DConditionModelImpl::UpBlock : torch::nn::Module {
  std::vector<std::shared_ptr<unet::TimeResnetBlock>> resnets;
  std::vector<std::shared_ptr<unet::SpatialTransformer>> attentions;
  std::shared_ptr<unet::Upsampler> upsampler;
};

UNet2DConditionModelImpl::UNet2DConditionModelImpl(UNetConfig config) : config_(std::move(config)) {
  const auto& channels = config_.block_out_channels;
  const size_t blocks = channels.size();
  const int64_t time_dim = config_.time_embed_dim(), groups = config_.norm_num_groups;
  const double eps = config_.norm_eps;
  conv_in_ = register_module("conv_in", std::make_shared<Conv2dLayer>(config_.in_channels, channels[0], 3, 1, 1));
  auto time_embedding = std::make_shared<PathNode>();
  time_linear_1_ = time_embedding->register_module("linear_1", Linear(channels[0], time_dim));
  time_linear_2_ = time_embedding->register_module("linear_2", Linear(time_dim, time_dim));
  register_module("time_embedding", time_embedding);
  if (config_.text_time_embedding) {
    auto add_embedding = std::make_shared<PathNode>();
    add_linear_1_ = add_embedding->register_module("linear_1", Linear(config_.projection_class_embeddings_input_dim, time_dim));
    add_linear_2_ = add_embedding->register_module("linear_2", Linear(time_dim, time_dim));
    register_module("add_embedding", add_embedding);
  }

  torch::nn::ModuleList down_list;
  int64_t output_channels = channels[0];
  for (size_t i = 0; i < blocks; ++i) {
    const int64_t input_channels = output_channels;
    output_channels = channels[i];
    auto block = std::make_shared<DownBlock>();
    for (int64_t j = 0; j < config_.layers_per_block; ++j) {
      block->resnets.push_back(std::make_shared<unet::TimeResnetBlock>(j == 0 ? input_channels : output_channels,
                                                                       output_channels, time_dim, groups, eps));
      if (config_.has_cross_attention(i))
        block->attentions.push_back(std::make_shared<unet::SpatialTransformer>(
            output_channels, config_.attention_heads[i], config_.transformer_layers[i], config_.cross_attention_dim,
            groups, config_.use_linear_projection));
    }
    if (!block->attentions.empty()) register_list(*block, "attentions", block->attentions);
    register_list(*block, "resnets", block->resnets);
    if (i + 1 < blocks) {
      block->downsampler = std::make_shared<unet::Downsampler>(output_channels);
      register_list(*block, "downsamplers", std::vector<std::shared_ptr<unet::Downsampler>>{block->downsampler});
    }
    down_.push_back(block);
    down_list->push_back(block);
  }
  register_module("down_blocks", down_list);

  auto mid = std::make_shared<PathNode>();
  const int64_t mid_channels = channels.back();
  mid_attention_ = std::make_shared<unet::SpatialTransformer>(mid_channels, config_.attention_heads.back(),
                                                              config_.transformer_layers.back(),
                                                              config_.cross_attention_dim, groups, config_.use_linear_projection);
  register_list(*mid, "attentions", std::vector<std::shared_ptr<unet::SpatialTransformer>>{mid_attention_});
  for (int k = 0; k < 2; ++k)
    mid_resnets_.push_back(std::make_shared<unet::TimeResnetBlock>(mid_channels, mid_channels, time_dim, groups, eps));
  register_list(*mid, "resnets", mid_resnets_);
  register_module("mid_block", mid);

  torch::nn::ModuleList up_list;
  std::vector<int64_t> reversed(channels.rbegin(), channels.rend());
  std::vector<int64_t> reversed_heads(config_.attention_heads.rbegin(), config_.attention_heads.rend());
  int64_t previous_output = reversed[0];
  for (size_t i = 0; i < blocks; ++i) {
    const int64_t out = reversed[i], in = reversed[std::min(i + 1, blocks - 1)];
    auto block = std::make_shared<UpBlock>();
    const bool cross = config_.up_block_types[i] == "CrossAttnUpBlock2D";
    for (int64_t j = 0; j <= config_.layers_per_block; ++j) {
      const int64_t skip = j == config_.layers_per_block ? in : out;
      const int64_t resnet_in = j == 0 ? previous_output : out;
      block->resnets.push_back(std::make_shared<unet::TimeResnetBlock>(resnet_in + skip, out, time_dim, groups, eps));
      if (cross)
        block->attentions.push_back(std::make_shared<unet::SpatialTransformer>(
            out, reversed_heads[i], config_.reverse_transformer_layers[i], config_.cross_attention_dim, groups,
            config_.use_linear_projection));
    }
    if (!block->attentions.empty()) register_list(*block, "attentions", block->attentions);
    register_list(*block, "resnets", block->resnets);
    if (i + 1 < blocks) {
      block->upsampler = std::make_shared<unet::Upsampler>(out);
      register_list(*block, "upsamplers", std::vector<std::shared_ptr<unet::Upsampler>>{block->upsampler});
    }
    previous_output = out;
    up_.push_back(block);
    up_list->push_back(block);
  }
  register_module("up_blocks", up_list);
  conv_norm_out_ = register_module("conv_norm_out", std::make_shared<GroupNormLayer>(groups, channels[0], eps));
  conv_out_ = register_module("conv_out", std::make_shared<Conv2dLayer>(channels[0], config_.out_channels, 3, 1, 1));
}

at::Tensor UNet2DConditionModelImpl::forward(const UNetInputs& inputs) const {
  at::NoGradGuard no_grad;
  const at::Tensor& sample = inputs.sample;
  if (sample.dim() != 4 || sample.size(1) != config_.in_channels)
    throw Error("UNet: sample must be [batch, " + std::to_string(config_.in_channels) + ", height, width]");
  if (!inputs.encoder_hidden_states.defined() || inputs.encoder_hidden_states.size(-1) != config_.cross_attention_dim)
    throw Error("UNet: encoder_hidden_states must end in cross_attention_dim " + std::to_string(config_.cross_attention_dim));
  const int64_t batch = sample.size(0);
  const at::Tensor timesteps = inputs.timestep.to(at::kFloat).reshape({-1}).expand({batch});
  at::Tensor temb = unet::timestep_embedding(timesteps, config_.block_out_channels[0], config_.flip_sin_to_cos, config_.freq_shift);
  temb = time_linear_2_->forward(at::silu(time_linear_1_->forward(temb)));
  if (config_.text_time_embedding) {
    if (!inputs.text_embeds.defined() || !inputs.time_ids.defined())
      throw Error("UNet: this SDXL-type model needs text_embeds and time_ids (added conditions)");
    const at::Tensor time_embeds =
        unet::timestep_embedding(inputs.time_ids.to(at::kFloat).reshape({-1}), config_.addition_time_embed_dim,
                                 config_.flip_sin_to_cos, config_.freq_shift)
            .reshape({batch, -1});
    const at::Tensor added = at::cat({inputs.text_embeds.to(at::kFloat), time_embeds}, -1);
    if (added.size(1) != config_.projection_class_embeddings_input_dim)
      throw Error("UNet: text_embeds and time_ids give " + std::to_string(added.size(1)) +
                  " added-condition values, the model expects " + std::to_string(config_.projection_class_embeddings_input_dim));
    temb = temb + add_linear_2_->forward(at::silu(add_linear_1_->forward(added)));
  }
  const at::Tensor context = inputs.encoder_hidden_states.to(at::kFloat);
  unet::UNetRouting* routing = inputs.routing;
  if (routing) routing->next_block = 0;
  auto transformer = [&](const unet::SpatialTransformer& attention, const at::Tensor& input) {
    if (!inputs.transformer_seconds) return attention.forward(input, context, routing);
    const auto start = std::chrono::steady_clock::now();
    at::Tensor output = attention.forward(input, context, routing);
    *inputs.transformer_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return output;
  };

  auto resnet = [&](const unet::TimeResnetBlock& block, const at::Tensor& input) {
    return routing ? block.forward_routed(input, temb, *routing) : block.forward(input, temb);
  };

  at::Tensor hidden = conv_in_->forward(sample.to(at::kFloat));
  std::vector<at::Tensor> skips{hidden};
  for (const auto& block : down_) {
    for (size_t j = 0; j < block->resnets.size(); ++j) {
      hidden = resnet(*block->resnets[j], hidden);
      if (!block->attentions.empty()) hidden = transformer(*block->attentions[j], hidden);
      skips.push_back(hidden);
    }
    if (block->downsampler) {
      hidden = block->downsampler->forward(hidden);
      skips.push_back(hidden);
    }
  }
  hidden = resnet(*mid_resnets_[0], hidden);
  hidden = transformer(*mid_attention_, hidden);
  hidden = resnet(*mid_resnets_[1], hidden);
  for (const auto& block : up_) {
    for (size_t j = 0; j < block->resnets.size(); ++j) {
      hidden = resnet(*block->resnets[j], at::cat({hidden, skips.back()}, 1));
      skips.pop_back();
      if (!block->attentions.empty()) hidden = transformer(*block->attentions[j], hidden);
    }
    if (block->upsampler) {
      // To the size of the skip it meets next (odd sizes do not double back exactly).
      const at::Tensor& next_skip = skips.back();
      hidden = block->upsampler->forward(hidden, {next_skip.size(2), next_skip.size(3)});
    }
  }
  if (routing && routing->next_block != static_cast<int>(unet_routed_blocks(config_).size()))
    throw Error("UNet: ran " + std::to_string(routing->next_block) + " routed blocks, the config lists " +
                std::to_string(unet_routed_blocks(config_).size()));
  return conv_out_->forward(conv_norm_out_->forward_silu(hidden));
}

at::ScalarType UNet2DConditionModelImpl::dtype() const {
  return time_linear_1_->weight.scalar_type();
}

}  // namespace flashps
