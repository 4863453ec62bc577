#include "bench/bench_support.h"

#include <ATen/ATen.h>

#include <cmath>

namespace flashps::bench {

engine::TokenMask blob_mask(int64_t grid, double ratio) {
  const int64_t tokens = grid * grid;
  const int64_t count = std::clamp<int64_t>(std::llround(ratio * double(tokens)), 1, tokens);
  at::Tensor rows = at::arange(grid, at::kFloat).repeat_interleave(grid);
  at::Tensor cols = at::arange(grid, at::kFloat).repeat({grid});
  at::Tensor distance = (rows - 0.4 * grid).pow(2) + (cols - 0.55 * grid).pow(2);
  at::Tensor order = std::get<1>(distance.sort());
  at::Tensor masked = at::zeros({tokens}, at::kBool);
  masked.index_fill_(0, order.slice(0, 0, count), true);
  return engine::token_mask_from_grid(masked.view({grid, grid}));
}

}  // namespace flashps::bench
