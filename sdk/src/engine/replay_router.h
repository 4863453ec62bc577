// Edit replay: the request computes only its masked tokens and takes the rest from a capture.
//   kv:     the residual stream carries text + masked image tokens; each block appends the
//           cached keys/values of the unmasked tokens to attention (compute ~ mask ratio).
//   hidden: the stream stays full; queries, attention and MLP run for masked rows only, and the
//           unmasked rows of each cached block's output are replaced by the capture. Blocks the
//           plan marks as uncached compute every token instead (no load).
// Cached rows stream in through a BlockLoader, overlapping compute.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "engine/block_loader.h"
#include "engine/capture.h"
#include "engine/planner.h"
#include "engine/token_mask.h"
#include "engine/token_router.h"

namespace flashps::engine {

struct ReplayStats {
  int blocks_from_cache = 0;
  int blocks_computed = 0;    // by plan or because an entry could not be read
  int entries_failed = 0;     // damaged/missing entries that fell back to compute
  int64_t bytes_loaded = 0;
  double load_wait_seconds = 0;  // compute time lost waiting for loads (pipeline bubbles)
  double load_seconds = 0;       // the loader's own time for the entries read (overlaps compute)
  int reads = 0;                 // entries read
  // Resident entries attended in place instead (not loads: no copy, no loader time, so neither
  // in bytes_loaded nor in reads, which feed the planner's load-speed estimate).
  int entries_in_place = 0;
  int64_t bytes_in_place = 0;
  std::string first_error;
};

// Raised when a kv replay cannot continue (a kv entry is unreadable): the caller reruns the
// edit with full computation.
class ReplayUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Entries the loader holds ahead of the compute stream by default.
constexpr int kDefaultPrefetchDepth = 2;
// The planner's model of that loader: kv reads two entries (keys, values) per cached block.
LoaderModel loader_model(CacheMode mode, int prefetch_depth = kDefaultPrefetchDepth);

// How a CPU kv replay reaches cached keys/values that are resident in host memory: attention
// reads the whole entry in place and skips the carried rows (no copy, but the skipped rows'
// scores are still computed: wasted work ~ queries x carried rows, so it pays for small masks
// only), or the loader gathers the rows not carried into a new tensor first (the only way for a
// GPU or a disk read). `automatic`: in place up to kMaxInPlaceMaskRatio, gathered above.
enum class KvAccess { automatic, in_place_when_resident, gathered };
// Measured with `flashps bench edit --phase-profile` (benchmarks/README.md): in place saves the
// gather at m = 0.05 and loses more in attention than it saves at m = 0.2.
constexpr double kMaxInPlaceMaskRatio = 0.1;

class ReplayRouter : public TokenRouter {
 public:
  // steps: the absolute step indices this run will execute, in order. use_cache: per block.
  ReplayRouter(std::shared_ptr<const Capture> capture, TokenMask mask, CacheMode mode,
               std::vector<bool> use_cache, std::vector<int> steps, at::Device device,
               int prefetch_depth = kDefaultPrefetchDepth, KvAccess kv_access = KvAccess::automatic);
  // Hidden replay with one token mask per block, for models whose blocks see different token
  // grids (a UNet's resolutions; each mask covers every image row the block carries).
  ReplayRouter(std::shared_ptr<const Capture> capture, std::vector<TokenMask> block_masks,
               std::vector<bool> use_cache, std::vector<int> steps, at::Device device, int prefetch_depth = kDefaultPrefetchDepth);
  void set_step(int step) { step_ = step; }
  // Image tokens the model carries: masked tokens (kv) or all (hidden: undefined tensor).
  at::Tensor carried_rows() const;
  const ReplayStats& stats();
  // True once before_block/finish_output threw ReplayUnavailable: the request must be computed
  // without this capture (a batch uses it to tell which of its requests failed).
  bool unavailable() const { return unavailable_; }

  BlockTokens before_block(int block) override;
  bool wants_keys_values(int) const override { return false; }
  void record_keys_values(int, const at::Tensor&, const at::Tensor&) override {}
  bool wants_block_output(int) const override { return false; }
  void record_block_output(int, const at::Tensor&) override {}
  at::Tensor finish_output(const at::Tensor& carried_output) override;

 private:
  LoadedEntry take(const EntryKey& key);
  void start_loading(std::shared_ptr<const Capture> capture, const std::vector<int>& steps,
                     const std::vector<TokenMask>& block_masks, int prefetch_depth, KvAccess kv_access);

  TokenMask mask_;  // kv replay: the one mask of every block and the output
  CacheMode mode_;
  std::vector<bool> use_cache_;
  at::Device device_;
  at::Tensor masked_rows_device_, unmasked_rows_device_;
  std::vector<at::Tensor> block_masked_rows_, block_unmasked_rows_;  // on the device, per block
  std::unique_ptr<BlockLoader> loader_;
  int step_ = 0;
  ReplayStats stats_;
  bool unavailable_ = false;
};

}  // namespace flashps::engine
