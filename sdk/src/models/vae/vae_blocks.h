// Building blocks of diffusers' AutoencoderKL (models/resnet.py, attention_processor.py), as
// torch::nn::Modules whose parameter names equal the checkpoint keys ("norm1.weight", "to_q.bias").
// Leaf layers (these and the shared flashps::Linear) hold only their parameters and call ATen
// directly: no random initialisation at construction (every parameter is loaded right after).
#pragma once
#include <ATen/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "models/common/image_layers.h"
#include "models/common/layers.h"

namespace flashps::vae {

// norm1 -> SiLU -> conv1 -> norm2 -> SiLU -> conv2, plus the input (through a 1x1 conv_shortcut
// when the channel count changes). No time embedding: the VAE passes temb=None.
class ResnetBlock2D : public torch::nn::Module {
 public:
  ResnetBlock2D(int64_t in_channels, int64_t out_channels, int64_t num_groups, double eps);
  at::Tensor forward(const at::Tensor& input) const;

 private:
  std::shared_ptr<GroupNormLayer> norm1_;
  std::shared_ptr<Conv2dLayer> conv1_;
  std::shared_ptr<GroupNormLayer> norm2_;
  std::shared_ptr<Conv2dLayer> conv2_;
  std::shared_ptr<Conv2dLayer> conv_shortcut_;  // null when in_channels == out_channels
};

// diffusers Downsample2D with padding=0: zero-pad right and bottom by one, then a stride-2 3x3
// conv.
class Downsample2D : public torch::nn::Module {
 public:
  explicit Downsample2D(int64_t channels);
  at::Tensor forward(const at::Tensor& input) const;

 private:
  std::shared_ptr<Conv2dLayer> conv_;
};

// diffusers Upsample2D: nearest-neighbour x2, then a 3x3 conv.
class Upsample2D : public torch::nn::Module {
 public:
  explicit Upsample2D(int64_t channels);
  at::Tensor forward(const at::Tensor& input) const;

 private:
  std::shared_ptr<Conv2dLayer> conv_;
};

// The mid block's single-head spatial self-attention (diffusers Attention with
// _from_deprecated_attn_block): group_norm, to_q/to_k/to_v and to_out.0 linear over channels,
// scale 1/sqrt(channels), softmax in float32 for reduced precision, residual added.
class SpatialSelfAttention : public torch::nn::Module {
 public:
  SpatialSelfAttention(int64_t channels, int64_t num_groups, double eps);
  at::Tensor forward(const at::Tensor& input) const;

 private:
  std::shared_ptr<GroupNormLayer> group_norm_;
  Linear to_q_{nullptr};
  Linear to_k_{nullptr};
  Linear to_v_{nullptr};
  Linear to_out_{nullptr};  // registered as to_out.0 (to_out.1 is a parameterless dropout)
};

// UNetMidBlock2D as the VAE builds it: resnets.0 -> attentions.0 (optional) -> resnets.1.
class VaeMidBlock : public torch::nn::Module {
 public:
  VaeMidBlock(int64_t channels, int64_t num_groups, bool add_attention);
  at::Tensor forward(const at::Tensor& input) const;

 private:
  std::vector<std::shared_ptr<ResnetBlock2D>> resnets_;
  std::shared_ptr<SpatialSelfAttention> attention_;  // null without mid-block attention
};

// Registers `children` (shared_ptrs or module holders) as a torch::nn::ModuleList named `name`,
// so their keys read "resnets.0.conv1.weight".
template <typename Child>
void register_module_list(torch::nn::Module& parent, const std::string& name,
                          const std::vector<Child>& children) {
  torch::nn::ModuleList list;
  for (const auto& child : children) list->push_back(child);
  parent.register_module(name, list);
}

// diffusers uses eps 1e-6 for every GroupNorm in the VAE.
constexpr double kVaeNormEps = 1e-6;

}  // namespace flashps::vae
