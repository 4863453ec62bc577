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
  // The same convolution with another zero padding (0: only outputs whose window lies inside the
  // input, as tiles with their halo already gathered need).
  at::Tensor forward_padded(const at::Tensor& input, int64_t padding) const;

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
  at::Tensor forward_silu(const at::Tensor& input) const;  // SiLU(forward(input)), fused on CPUs
  // Normalises with given statistics instead of the input's own: mean and variance [B, groups]
  // (float32) for input [B, C, ...] (tiles of an image whose statistics cover the whole image).
  at::Tensor forward_with_statistics(const at::Tensor& input, const at::Tensor& mean, const at::Tensor& variance) const;
  int64_t groups() const { return num_groups_; }

 private:
  at::Tensor normalize(const at::Tensor& input, bool silu) const;
  at::Tensor weight_;
  at::Tensor bias_;
  int64_t num_groups_;
  double eps_;
};

}  // namespace flashps
