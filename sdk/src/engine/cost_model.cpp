#include "engine/cost_model.h"

namespace flashps::engine {

double block_flops(const BlockWork& work, int64_t queries, int64_t keys, int64_t attended) {
  return work.flops_per_query_row * double(queries) + work.flops_per_key_row * double(keys) +
         work.flops_per_query_key * double(queries) * double(attended);
}

double forward_flops(const std::vector<BlockWork>& blocks, const TokenCounts& tokens) {
  const int64_t all = tokens.text + tokens.image;
  double total = 0;
  for (const BlockWork& work : blocks) total += block_flops(work, all, all, all);
  return total;
}

double forward_flops(const std::vector<BlockWork>& blocks, const TokenCounts& tokens, CacheKind kind) {
  const int64_t computed = tokens.text + tokens.masked, all = tokens.text + tokens.image;
  double total = 0;
  for (const BlockWork& work : blocks) {
    // kv: only computed rows get keys; hidden: every row's keys are recomputed.
    total += block_flops(work, computed, kind == CacheKind::kv ? computed : all, all);
  }
  return total;
}

std::vector<BlockTimes> estimate_block_times(const std::vector<BlockWork>& blocks,
                                             const TokenCounts& tokens, CacheKind kind,
                                             const DeviceSpeed& speed) {
  const int64_t computed = tokens.text + tokens.masked, all = tokens.text + tokens.image;
  const int64_t cached_rows = tokens.image - tokens.masked;
  std::vector<BlockTimes> times;
  for (const BlockWork& work : blocks) {
    BlockTimes block;
    block.compute_without_cache =
        speed.fixed_seconds_per_block + block_flops(work, all, all, all) / speed.flops_per_second;
    block.compute_with_cache =
        speed.fixed_seconds_per_block +
        block_flops(work, computed, kind == CacheKind::kv ? computed : all, all) / speed.flops_per_second;
    const double bytes = double(cached_rows) * (kind == CacheKind::kv ? work.cached_bytes_per_row_kv
                                                                      : work.cached_bytes_per_row_hidden);
    block.load = speed.fixed_seconds_per_load + bytes / speed.load_bytes_per_second;
    times.push_back(block);
  }
  return times;
}

}  // namespace flashps::engine
