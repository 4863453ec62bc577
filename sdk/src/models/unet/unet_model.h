// UNet2DConditionModel (diffusers v0.32) for SD 1.x / 2.x / XL, 4- or 9-channel inputs.
// Module paths equal checkpoint keys ("down_blocks.1.attentions.0.transformer_blocks.0.attn2.
// to_k.weight"), so loading is a strict lookup.
#pragma once
#include <ATen/Tensor.h>
#include <torch/nn/module.h>

#include <memory>
#include <string>
#include <vector>

#include "models/common/layers.h"
#include "models/loading/checkpoint_tensors.h"
#include "models/loading/weights.h"
#include "models/unet/unet_blocks.h"
#include "models/unet/unet_config.h"

namespace flashps {

struct UNetInputs {
  at::Tensor sample;                 // [B, in_channels, H, W]
  at::Tensor timestep;               // [B] (or a scalar), 0..999
  at::Tensor encoder_hidden_states;  // [B, T, cross_attention_dim]
  at::Tensor text_embeds;            // SDXL: [B, D] pooled text embedding
  at::Tensor time_ids;               // SDXL: [B, n] micro-conditioning
  unet::UNetRouting* routing = nullptr;  // mask-aware replay/capture per request (optional)
  // Benchmarks: seconds spent in the Transformer2DModels (GroupNorm, projections, transformer
  // blocks) are added here; the rest of a forward is ResNets, samplers and embeddings.
  double* transformer_seconds = nullptr;
};

class UNet2DConditionModelImpl : public torch::nn::Module {
 public:
  explicit UNet2DConditionModelImpl(UNetConfig config);
  at::Tensor forward(const UNetInputs& inputs) const;  // [B, out_channels, H, W]
  const UNetConfig& config() const { return config_; }
  at::ScalarType dtype() const;  // of the weights

 private:
  struct DownBlock;
  struct UpBlock;
  UNetConfig config_;
  std::shared_ptr<Conv2dLayer> conv_in_, conv_out_;
  Linear time_linear_1_{nullptr}, time_linear_2_{nullptr}, add_linear_1_{nullptr}, add_linear_2_{nullptr};
  std::vector<std::shared_ptr<DownBlock>> down_;
  std::vector<std::shared_ptr<UpBlock>> up_;
  std::vector<std::shared_ptr<unet::TimeResnetBlock>> mid_resnets_;
  std::shared_ptr<unet::SpatialTransformer> mid_attention_;
  std::shared_ptr<GroupNormLayer> conv_norm_out_;
};
TORCH_MODULE(UNet2DConditionModel);

// Loads <dir>/config.json and the diffusers weights (single file or sharded index) strictly.
UNet2DConditionModel load_unet(const std::string& dir, at::ScalarType dtype = at::kFloat);

// Loads from tensors in diffusers' keys (after unet_tensors), checking `config` (read from
// `config_source`, named in errors) against their shapes first. `options` pass through to the
// strict loader; its dtype is replaced by `dtype`. The folder loader above is this one.
UNet2DConditionModel load_unet(const CheckpointTensors& weights, const UNetConfig& config,
                               const std::string& config_source, at::ScalarType dtype,
                               const WeightLoadOptions& options = {});

// `stored` in diffusers' keys: a UNet in the original Stable Diffusion (LDM) keys is seen through
// unet_ldm_layout; anything else is returned unchanged.
std::unique_ptr<CheckpointTensors> unet_tensors(std::unique_ptr<CheckpointTensors> stored, const UNetConfig& config);

}  // namespace flashps
