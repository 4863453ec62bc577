// Per-block cost estimates for the planner and the scheduler: FLOPs of a block as a function
// of how many rows it computes (from the model family), mapped to seconds by a device's linear
// speed model (fitted by profiling; defaults are conservative CPU figures).
#pragma once
#include <cstdint>
#include <vector>

#include "engine/block_times.h"
#include "engine/cache_mode.h"

namespace flashps::engine {

// FLOPs of one block = per_query_row * queries + per_key_row * keys + per_query_key * q * k,
// where `queries` rows get the full per-token work (projections, attention output, MLP) and
// `keys` rows only their key/value projections.
struct BlockWork {
  double flops_per_query_row = 0;
  double flops_per_key_row = 0;
  double flops_per_query_key = 0;
  double cached_bytes_per_row_kv = 0;      // K + V of one token
  double cached_bytes_per_row_hidden = 0;  // the block output of one token
};

struct DeviceSpeed {
  double flops_per_second = 2e11;
  double fixed_seconds_per_block = 0;
  double load_bytes_per_second = 4e9;
  double fixed_seconds_per_load = 0;
};

struct TokenCounts {
  int64_t text = 0, image = 0, masked = 0;
};

double block_flops(const BlockWork& work, int64_t queries, int64_t keys, int64_t attended);
// FLOPs of one forward in full, or with a cache mode for the given mask.
double forward_flops(const std::vector<BlockWork>& blocks, const TokenCounts& tokens);
double forward_flops(const std::vector<BlockWork>& blocks, const TokenCounts& tokens, CacheMode mode);

std::vector<BlockTimes> estimate_block_times(const std::vector<BlockWork>& blocks,
                                             const TokenCounts& tokens, CacheMode mode,
                                             const DeviceSpeed& speed);

// The same for blocks that each see their own token counts (a UNet's resolutions):
// block_tokens[i] belongs to blocks[i].
double forward_flops(const std::vector<BlockWork>& blocks, const std::vector<TokenCounts>& block_tokens);
double forward_flops(const std::vector<BlockWork>& blocks, const std::vector<TokenCounts>& block_tokens,
                     CacheMode mode);
std::vector<BlockTimes> estimate_block_times(const std::vector<BlockWork>& blocks,
                                             const std::vector<TokenCounts>& block_tokens, CacheMode mode,
                                             const DeviceSpeed& speed);
// FLOPs of one forward as a plan runs it: the blocks that use the cache compute their carried
// rows (`mode`), the others every row.
double planned_flops(const std::vector<BlockWork>& blocks, const std::vector<TokenCounts>& block_tokens,
                     CacheMode mode, const std::vector<bool>& use_cache);

}  // namespace flashps::engine
