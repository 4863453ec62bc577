#include "models/random/random_weights.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <cmath>

namespace flashps {

void fill_random_weights(torch::nn::Module& module, uint64_t seed) {
  at::NoGradGuard no_grad;
  auto generator = at::detail::createCPUGenerator(seed);
  for (const auto& item : module.named_parameters(/*recurse=*/true)) {
    const std::string& name = item.key();
    at::Tensor parameter = item.value();
    at::Tensor values = at::empty(parameter.sizes(), at::TensorOptions().dtype(at::kFloat));
    const bool is_bias = name.size() >= 4 && name.compare(name.size() - 4, 4, "bias") == 0;
    const bool is_norm_scale = parameter.dim() == 1 && !is_bias;
    if (is_norm_scale) {
      values.normal_(1.0, 0.1, generator);
    } else if (is_bias || parameter.dim() < 2) {
      values.normal_(0.0, 0.05, generator);
    } else {
      const double fan_in = static_cast<double>(parameter.numel() / parameter.size(0));
      values.normal_(0.0, std::clamp(1.0 / std::sqrt(fan_in), 0.02, 0.2), generator);
    }
    parameter.copy_(values.to(parameter.options()));
  }
}

}  // namespace flashps
