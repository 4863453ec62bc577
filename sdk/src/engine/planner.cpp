#include "engine/planner.h"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace flashps::engine {

double pipeline_latency(const std::vector<BlockTimes>& blocks, const std::vector<bool>& use_cache, LoaderModel loader) {
  double load = 0, compute = 0;
  std::vector<double> taken;  // when the compute stream took each cached block (its start)
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (use_cache[i]) {
      double start = load;
      const size_t index = taken.size();
      if (loader.lookahead > 0 && index >= static_cast<size_t>(loader.lookahead))
        start = std::max(start, taken[index - loader.lookahead]);
      load = start + blocks[i].load;
      const double begin = std::max(load, compute);
      taken.push_back(begin);
      compute = begin + blocks[i].compute_with_cache;
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

namespace {

// The plan that ends in state `best`, read back through the states' parents.
template <typename State>
PipelinePlan plan_from(const std::vector<State>& history, int64_t best, size_t blocks) {
  PipelinePlan plan;
  plan.latency = history[best].compute;
  plan.use_cache.assign(blocks, false);
  for (int64_t index = best, i = static_cast<int64_t>(blocks) - 1; i >= 0; --i) {
    plan.use_cache[i] = history[index].used_cache;
    index = history[index].parent;
  }
  return plan;
}

// The exact plan for an unbounded loader.
PipelinePlan plan_unbounded(const std::vector<BlockTimes>& blocks) {
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

  return plan_from(history, frontier.front(), blocks.size());  // sorted by compute finish: the fastest
}

}  // namespace

PipelinePlan plan_pipeline(const std::vector<BlockTimes>& blocks, LoaderModel loader) {
  if (loader.lookahead <= 0) return plan_unbounded(blocks);
  // With a window, a load also waits for the compute stream to take the cached block `lookahead`
  // places before it, so the state grows by those take times (oldest first). Every coordinate is
  // monotone, so a state no later in all of them than another dominates it; the frontier keeps
  // the non-dominated ones, which makes the programme exact (bounded like the unbounded one).
  const size_t window = static_cast<size_t>(loader.lookahead);
  struct State {
    double load, compute;
    std::vector<double> taken;  // up to `window` most recent take times
    int64_t parent;
    bool used_cache;
  };
  const auto dominates = [](const State& a, const State& b) {
    if (a.load > b.load || a.compute > b.compute || a.taken.size() > b.taken.size()) return false;
    // Fewer recorded takes means an earlier block: no constraint yet, which is never worse.
    const size_t offset = b.taken.size() - a.taken.size();
    for (size_t i = 0; i < a.taken.size(); ++i)
      if (a.taken[i] > b.taken[i + offset]) return false;
    return true;
  };
  std::vector<State> history{{0, 0, {}, -1, false}};
  std::vector<int64_t> frontier{0};
  // Dominance checks are quadratic in the frontier: past this many states the fastest are kept
  // (plans of a few dozen blocks stay within a few milliseconds; small ones stay exact).
  constexpr size_t kFrontierLimit = 256;
  for (const BlockTimes& block : blocks) {
    std::vector<State> candidates;
    for (int64_t index : frontier) {
      const State& state = history[index];
      candidates.push_back({state.load, state.compute + block.compute_without_cache, state.taken, index, false});
      double start = state.load;
      if (state.taken.size() == window) start = std::max(start, state.taken.front());
      const double load = start + block.load;
      const double begin = std::max(load, state.compute);
      std::vector<double> taken = state.taken;
      taken.push_back(begin);
      if (taken.size() > window) taken.erase(taken.begin());
      candidates.push_back({load, begin + block.compute_with_cache, std::move(taken), index, true});
    }
    std::sort(candidates.begin(), candidates.end(), [](const State& a, const State& b) {
      return a.compute != b.compute ? a.compute < b.compute : a.load < b.load;
    });
    frontier.clear();
    std::vector<size_t> kept;
    for (size_t c = 0; c < candidates.size() && kept.size() < kFrontierLimit; ++c) {
      bool dominated = false;
      for (size_t k : kept)
        if (dominates(candidates[k], candidates[c])) {
          dominated = true;
          break;
        }
      if (dominated) continue;
      kept.push_back(c);
    }
    for (size_t k : kept) {
      history.push_back(std::move(candidates[k]));
      frontier.push_back(static_cast<int64_t>(history.size()) - 1);
    }
  }
  return plan_from(history, frontier.front(), blocks.size());  // sorted by compute finish: the fastest
}

}  // namespace flashps::engine
