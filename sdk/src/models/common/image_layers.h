// Leaf layers over image tensors [B, C, H, W] shared by the VAE and the UNet: parameters named
// like the checkpoint ("weight", "bias"), no initialisation (loading fills them). With
// bfloat16 weights and float32 activations they run mixed precision: convolution products in
// bfloat16, activations and normalisation statistics in float32.
#pragma once
#include <ATen/Tensor.h>
#include <torch/nn/module.h>

#include <cstdint>

namespace flashps {

class Conv2dLayer : public torch::nn::Module {
 public:
  Conv2dLayer(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride = 1,
              int64_t padding = 0);
  at::Tensor forward(const at::Tensor& input) const;

 private:
  at::Tensor weight_;
  at::Tensor bias_;
  int64_t stride_;
  int64_t padding_;
};

class GroupNormLayer : public torch::nn::Module {
 public:
  GroupNormLayer(int64_t num_groups, int64_t channels, double eps);
  at::Tensor forward(const at::Tensor& input) const;

 private:
  at::Tensor weight_;
  at::Tensor bias_;
  int64_t num_groups_;
  double eps_;
};

}  // namespace flashps
