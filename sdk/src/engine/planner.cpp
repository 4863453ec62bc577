#include "engine/planner.h"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace flashps::engine {

double pipeline_latency(const std::vector<BlockTimes>& blocks, const std::vector<bool>& use_cache) {
  double load = 0, compute = 0;
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (use_cache[i]) {
      load += blocks[i].load;
      compute = std::max(load, compute) + blocks[i].compute_with_cache;
    } else {
      compute += blocks[i].compute_without_cache;
    }
  }
  return compute;
}

PipelinePlan plan_pipeline_greedy(const std::vector<BlockTimes>& blocks) {
  PipelinePlan plan;
  double load = 0, compute = 0;
  for (const BlockTimes& block : blocks) {
    const double cached = std::max(load + block.load, compute) + block.compute_with_cache;
    const double full = compute + block.compute_without_cache;
    const bool use = cached <= full;
    plan.use_cache.push_back(use);
    if (use) {
      load += block.load;
      compute = cached;
    } else {
      compute = full;
    }
  }
  plan.latency = compute;
  return plan;
}

PipelinePlan plan_pipeline(const std::vector<BlockTimes>& blocks) {
  // A state is (load finish, compute finish); both transitions are monotone in both, so a
  // state dominated in both coordinates can never lead to a better plan and is dropped.
  struct State {
    double load, compute;
    int64_t parent;  // index into `history` of the previous state, -1 at the start
    bool used_cache;
  };
  std::vector<State> history;
  std::vector<int64_t> frontier{0};
  history.push_back({0, 0, -1, false});
  constexpr size_t kFrontierLimit = 4096;  // never reached in practice; keeps the worst case bounded

  for (const BlockTimes& block : blocks) {
    std::vector<State> candidates;
    candidates.reserve(frontier.size() * 2);
    for (int64_t index : frontier) {
      const State& state = history[index];
      candidates.push_back({state.load, state.compute + block.compute_without_cache, index, false});
      const double load = state.load + block.load;
      candidates.push_back({load, std::max(load, state.compute) + block.compute_with_cache, index, true});
    }
    std::sort(candidates.begin(), candidates.end(), [](const State& a, const State& b) {
      return a.compute != b.compute ? a.compute < b.compute : a.load < b.load;
    });
    frontier.clear();
    double best_load = std::numeric_limits<double>::infinity();
    for (const State& candidate : candidates) {
      if (candidate.load >= best_load) continue;  // dominated: no faster and no less loading
      best_load = candidate.load;
      history.push_back(candidate);
      frontier.push_back(static_cast<int64_t>(history.size()) - 1);
      if (frontier.size() >= kFrontierLimit) break;
    }
  }

  int64_t best = frontier.front();  // sorted by compute finish: the first is the fastest
  PipelinePlan plan;
  plan.latency = history[best].compute;
  plan.use_cache.assign(blocks.size(), false);
  for (int64_t index = best, i = static_cast<int64_t>(blocks.size()) - 1; i >= 0; --i) {
    plan.use_cache[i] = history[index].used_cache;
    index = history[index].parent;
  }
  return plan;
}

}  // namespace flashps::engine
