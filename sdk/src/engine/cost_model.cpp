#include "engine/cost_model.h"

#include "core/diagnostics/error.h"

namespace flashps::engine {

double block_flops(const BlockWork& work, int64_t queries, int64_t keys, int64_t attended) {
  return work.flops_per_query_row * double(queries) + work.flops_per_key_row * double(keys) +
         work.flops_per_query_key * double(queries) * double(attended);
}

double forward_flops(const std::vector<BlockWork>& blocks, const TokenCounts& tokens) {
  return forward_flops(blocks, std::vector<TokenCounts>(blocks.size(), tokens));
}

double forward_flops(const std::vector<BlockWork>& blocks, const TokenCounts& tokens, CacheMode mode) {
  return forward_flops(blocks, std::vector<TokenCounts>(blocks.size(), tokens), mode);
}

std::vector<BlockTimes> estimate_block_times(const std::vector<BlockWork>& blocks,
                                             const TokenCounts& tokens, CacheMode mode,
                                             const DeviceSpeed& speed) {
  return estimate_block_times(blocks, std::vector<TokenCounts>(blocks.size(), tokens), mode, speed);
}

namespace {

void check_sizes(const std::vector<BlockWork>& blocks, const std::vector<TokenCounts>& block_tokens) {
  if (blocks.size() != block_tokens.size()) throw Error("cost model: one token count per block expected");
}

}  // namespace

double forward_flops(const std::vector<BlockWork>& blocks, const std::vector<TokenCounts>& block_tokens) {
  check_sizes(blocks, block_tokens);
  double total = 0;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const int64_t all = block_tokens[i].text + block_tokens[i].image;
    total += block_flops(blocks[i], all, all, all);
  }
  return total;
}

double forward_flops(const std::vector<BlockWork>& blocks, const std::vector<TokenCounts>& block_tokens,
                     CacheMode mode) {
  check_sizes(blocks, block_tokens);
  replay_mode(mode, "cost model");
  double total = 0;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const TokenCounts& tokens = block_tokens[i];
    const int64_t computed = tokens.text + tokens.masked, all = tokens.text + tokens.image;
    // kv: only computed rows get keys; hidden: every row's keys are recomputed.
    total += block_flops(blocks[i], computed, mode == CacheMode::kv ? computed : all, all);
  }
  return total;
}

double planned_flops(const std::vector<BlockWork>& blocks, const std::vector<TokenCounts>& block_tokens,
                     CacheMode mode, const std::vector<bool>& use_cache) {
  check_sizes(blocks, block_tokens);
  if (use_cache.size() != blocks.size()) throw Error("cost model: one cache choice per block expected");
  double total = 0;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const std::vector<BlockWork> block{blocks[i]};
    total += use_cache[i] ? forward_flops(block, block_tokens[i], mode) : forward_flops(block, block_tokens[i]);
  }
  return total;
}

std::vector<BlockTimes> estimate_block_times(const std::vector<BlockWork>& blocks,
                                             const std::vector<TokenCounts>& block_tokens, CacheMode mode,
                                             const DeviceSpeed& speed) {
  check_sizes(blocks, block_tokens);
  replay_mode(mode, "cost model");
  std::vector<BlockTimes> times;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const BlockWork& work = blocks[i];
    const TokenCounts& tokens = block_tokens[i];
    const int64_t computed = tokens.text + tokens.masked, all = tokens.text + tokens.image;
    const int64_t cached_rows = tokens.image - tokens.masked;
    BlockTimes block;
    block.compute_without_cache =
        speed.fixed_seconds_per_block + block_flops(work, all, all, all) / speed.flops_per_second;
    block.compute_with_cache =
        speed.fixed_seconds_per_block +
        block_flops(work, computed, mode == CacheMode::kv ? computed : all, all) / speed.flops_per_second;
    const double bytes = double(cached_rows) * (mode == CacheMode::kv ? work.cached_bytes_per_row_kv
                                                                      : work.cached_bytes_per_row_hidden);
    block.load = speed.fixed_seconds_per_load + bytes / speed.load_bytes_per_second;
    times.push_back(block);
  }
  return times;
}

}  // namespace flashps::engine
