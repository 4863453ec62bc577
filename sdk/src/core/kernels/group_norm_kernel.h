// GroupNorm on the CPU with statistics that hold, optionally followed by SiLU in the same pass.
// LibTorch's CPU kernel loses the statistics in two cases the UNet and VAE hit: in bf16 it
// accumulates in bf16 (errors of order 1 on unit-variance input), and on channels-last input
// LibTorch 1.13 computes E[x^2] - E[x]^2 in one pass, which cancels when a group's mean is large
// next to its spread (even in float32). This kernel sums in float32 around a sampled per-group
// mean (shift-invariant statistics) in either layout, reads bf16 directly, and writes the
// input's dtype and layout: two passes over the data, like LibTorch's.
#pragma once
#include <ATen/Tensor.h>

namespace flashps {

// CPU, float32 or bf16, [B, C, ...] contiguous or 4-D channels-last, no autograd.
bool group_norm_kernel_applies(const at::Tensor& input);

// `weight` and `bias` [C] (any floating dtype; empty tensors for none). SiLU is applied after
// the affine transform when `silu` is set.
at::Tensor group_norm_cpu(const at::Tensor& input, int64_t groups, const at::Tensor& weight, const at::Tensor& bias,
                          double eps, bool silu);

}  // namespace flashps
