// Seeded random weights for any module tree (benchmarks, tests, the untrained starting point of
// training): the fixtures' recipe, so that no path is zero. Norm scales ~ 1 + 0.1 N(0,1),
// biases ~ 0.05 N(0,1), matrices ~ N(0, s^2) with s = clamp(1/sqrt(fan_in), 0.02, 0.2).
#pragma once
#include <cstdint>

namespace torch::nn {
class Module;
}

namespace flashps {

void fill_random_weights(torch::nn::Module& module, uint64_t seed);

}  // namespace flashps
