#include "engine/replay_router.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "core/diagnostics/error.h"

namespace flashps::engine {

ReplayRouter::ReplayRouter(std::shared_ptr<const Capture> capture, TokenMask mask, CacheMode mode,
                           std::vector<bool> use_cache, std::vector<int> steps, at::Device device,
                           int prefetch_depth, KvAccess kv_access)
    : mask_(std::move(mask)), mode_(replay_mode(mode, "replay router")), use_cache_(std::move(use_cache)), device_(device) {
  if (mode_ == CacheMode::kv) use_cache_.assign(use_cache_.size(), true);  // kv cannot skip blocks
  masked_rows_device_ = mask_.masked_rows.to(device_);
  unmasked_rows_device_ = mask_.unmasked_rows.to(device_);
  start_loading(std::move(capture), steps, std::vector<TokenMask>(use_cache_.size(), mask_), prefetch_depth,
                kv_access);
}

ReplayRouter::ReplayRouter(std::shared_ptr<const Capture> capture, std::vector<TokenMask> block_masks,
                           std::vector<bool> use_cache, std::vector<int> steps, at::Device device,
                           int prefetch_depth)
    : mode_(CacheMode::hidden), use_cache_(std::move(use_cache)), device_(device) {
  if (block_masks.size() != use_cache_.size())
    throw Error("replay: one token mask per block expected");
  start_loading(std::move(capture), steps, block_masks, prefetch_depth, KvAccess::gathered);
}

void ReplayRouter::start_loading(std::shared_ptr<const Capture> capture, const std::vector<int>& steps,
                                 const std::vector<TokenMask>& block_masks, int prefetch_depth,
                                 KvAccess kv_access) {
  for (const TokenMask& mask : block_masks) {
    // Blocks sharing a mask share its device copies.
    const bool same = !block_masked_rows_.empty() && mask.masked_rows.is_same(block_masks[block_masked_rows_.size() - 1].masked_rows);
    block_masked_rows_.push_back(same ? block_masked_rows_.back() : mask.masked_rows.to(device_));
    block_unmasked_rows_.push_back(same ? block_unmasked_rows_.back() : mask.unmasked_rows.to(device_));
  }
  std::vector<EntryKey> order;
  std::vector<at::Tensor> rows;
  for (int step : steps) {
    for (int block = 0; block < static_cast<int>(use_cache_.size()); ++block) {
      if (!use_cache_[block]) continue;
      const at::Tensor& unmasked = block_masks[block].unmasked_rows;
      if (mode_ == CacheMode::kv) {
        order.push_back({step, block, Slot::keys});
        order.push_back({step, block, Slot::values});
        rows.insert(rows.end(), 2, unmasked);
      } else {
        order.push_back({step, block, Slot::hidden});
        rows.push_back(unmasked);
      }
    }
    if (mode_ == CacheMode::kv) {
      order.push_back({step, kOutputBlock, Slot::output});
      rows.push_back(mask_.unmasked_rows);
    }
  }
  std::vector<Slot> shared_slots;
  const double ratio = double(mask_.masked_count()) / double(std::max<int64_t>(1, mask_.token_count()));
  const bool in_place = kv_access == KvAccess::in_place_when_resident ||
                        (kv_access == KvAccess::automatic && ratio <= kMaxInPlaceMaskRatio);
  if (mode_ == CacheMode::kv && in_place) shared_slots = {Slot::keys, Slot::values};
  loader_ = std::make_unique<BlockLoader>(std::move(capture), std::move(order), std::move(rows), device_,
                                          prefetch_depth, std::move(shared_slots));
}

LoaderModel loader_model(CacheMode mode, int prefetch_depth) {
  return {mode == CacheMode::kv ? std::max(1, prefetch_depth / 2) : std::max(1, prefetch_depth)};
}

at::Tensor ReplayRouter::carried_rows() const {
  return mode_ == CacheMode::kv ? mask_.masked_rows : at::Tensor();
}

const ReplayStats& ReplayRouter::stats() {
  stats_.load_wait_seconds = loader_->wait_seconds();
  return stats_;
}

LoadedEntry ReplayRouter::take(const EntryKey& key) {
  LoadedEntry entry = loader_->next(key);
  if (entry.error.empty() && entry.whole_entry) {
    ++stats_.entries_in_place;
    stats_.bytes_in_place += entry.bytes;
  } else if (entry.error.empty()) {
    stats_.bytes_loaded += entry.bytes;
    stats_.load_seconds += entry.load_seconds;
    ++stats_.reads;
  } else {
    ++stats_.entries_failed;
    if (stats_.first_error.empty()) stats_.first_error = entry.error;
  }
  return entry;
}

BlockTokens ReplayRouter::before_block(int block) {
  BlockTokens tokens;
  if (block >= static_cast<int>(use_cache_.size()) || !use_cache_[block]) {
    ++stats_.blocks_computed;
    return tokens;
  }
  if (mode_ == CacheMode::kv) {
    LoadedEntry keys = take({step_, block, Slot::keys});
    LoadedEntry values = take({step_, block, Slot::values});
    if (!keys.error.empty() || !values.error.empty()) {
      unavailable_ = true;
      throw ReplayUnavailable("cached keys/values unreadable: " +
                              (keys.error.empty() ? values.error : keys.error));
    }
    tokens.extra_keys = keys.rows;
    tokens.extra_values = values.rows;
    const int64_t tokens_count = mask_.token_count();
    if ((keys.whole_entry && keys.rows.size(0) != tokens_count) ||
        (values.whole_entry && values.rows.size(0) != tokens_count)) {
      unavailable_ = true;
      throw ReplayUnavailable("cached keys/values have " + std::to_string(keys.rows.size(0)) + " rows, the edit has " +
                              std::to_string(tokens_count) + " tokens");
    }
    if (keys.whole_entry && values.whole_entry) {
      tokens.extra_skipped_rows = masked_rows_device_;  // computed afresh by the request
    } else if (keys.whole_entry || values.whole_entry) {  // one was evicted meanwhile: gather both
      if (keys.whole_entry) tokens.extra_keys = keys.rows.index_select(0, unmasked_rows_device_);
      if (values.whole_entry) tokens.extra_values = values.rows.index_select(0, unmasked_rows_device_);
    }
  } else {
    LoadedEntry hidden = take({step_, block, Slot::hidden});
    if (!hidden.error.empty()) {  // damaged entry: this block computes every token instead
      ++stats_.blocks_computed;
      return tokens;
    }
    tokens.query_rows = block_masked_rows_[block];
    tokens.replaced_rows = block_unmasked_rows_[block];
    tokens.replaced_values = hidden.rows;
  }
  ++stats_.blocks_from_cache;
  return tokens;
}

at::Tensor ReplayRouter::finish_output(const at::Tensor& carried_output) {
  if (mode_ != CacheMode::kv) return carried_output;
  LoadedEntry cached = take({step_, kOutputBlock, Slot::output});
  if (!cached.error.empty()) {
    unavailable_ = true;
    throw ReplayUnavailable("cached model output unreadable: " + cached.error);
  }
  at::Tensor full = at::empty({mask_.token_count(), carried_output.size(1)}, carried_output.options());
  full.index_copy_(0, masked_rows_device_, carried_output);
  full.index_copy_(0, unmasked_rows_device_, cached.rows.to(carried_output.scalar_type()));
  return full;
}

}  // namespace flashps::engine
