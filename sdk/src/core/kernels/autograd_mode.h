// The hand-written kernels (oneDNN sgemm on raw pointers, SIMD element-wise loops) have no
// backward. When LibTorch is recording a graph through a tensor — training — every layer takes
// its plain ATen path instead, so the same module classes train and serve.
#pragma once
#include <ATen/Tensor.h>
#include <ATen/core/grad_mode.h>

namespace flashps {

template <typename... Tensors>
bool needs_autograd(const Tensors&... tensors) {
  if (!at::GradMode::is_enabled()) return false;
  return ((tensors.defined() && tensors.requires_grad()) || ...);
}

}  // namespace flashps
