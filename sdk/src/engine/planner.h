// The bubble-free pipeline planner (FlashPS Algorithm 1). Cached activations are loaded block by
// block on a side stream while the compute stream runs; a block that uses the cache must wait
// for its load. Choosing, per block, cache (cheaper compute, needs a load) or full compute (no
// load) to minimise the finish time of the last block.
//
// The paper's Algorithm 1 decides greedily block by block. That is not always optimal (a load
// taken early delays every later load), so plan_pipeline() solves the problem exactly with a
// dynamic programme over Pareto-optimal (load finish, compute finish) states; the greedy version
// is kept for comparison and tests.
#pragma once
#include <vector>

#include "engine/block_times.h"

namespace flashps::engine {

struct PipelinePlan {
  std::vector<bool> use_cache;  // per block
  double latency = 0;           // finish time of the last block
};

// How far the loader may run ahead of the compute stream, in cached blocks: the loader of
// engine/block_loader.h holds at most `depth` loaded entries, so a block's load starts only once
// the compute stream has taken the block `lookahead` cached blocks before it. 0: unbounded (the
// paper's model: loads back to back from the start).
struct LoaderModel {
  int lookahead = 0;
};

// Finish time of a given choice (both streams start at 0; loads run back to back, at most
// `loader.lookahead` cached blocks ahead of compute).
double pipeline_latency(const std::vector<BlockTimes>& blocks, const std::vector<bool>& use_cache,
                        LoaderModel loader = {});

// The fastest plan (a dynamic programme over non-dominated states; with a bounded loader the
// state also holds the take times of the last `lookahead` cached blocks).
PipelinePlan plan_pipeline(const std::vector<BlockTimes>& blocks, LoaderModel loader = {});
PipelinePlan plan_pipeline_greedy(const std::vector<BlockTimes>& blocks);  // paper's Algorithm 1

}  // namespace flashps::engine
