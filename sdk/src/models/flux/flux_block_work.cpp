#include "models/flux/flux_block_work.h"

namespace flashps {

std::vector<engine::BlockWork> flux_block_work(const FluxConfig& config, int64_t bytes_per_value) {
  const double dim = double(config.inner_dim());
  engine::BlockWork work;
  work.flops_per_query_row = 2.0 * 10.0 * dim * dim;
  work.flops_per_key_row = 2.0 * 2.0 * dim * dim;
  work.flops_per_query_key = 2.0 * 2.0 * dim;  // scores and weighted values
  work.cached_bytes_per_row_kv = 2.0 * dim * double(bytes_per_value);
  work.cached_bytes_per_row_hidden = dim * double(bytes_per_value);
  return std::vector<engine::BlockWork>(config.block_count(), work);
}

}  // namespace flashps
