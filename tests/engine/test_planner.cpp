#include <catch2/catch.hpp>
#include <random>

#include "engine/planner.h"

using namespace flashps::engine;

namespace {

double brute_force_best(const std::vector<BlockTimes>& blocks, LoaderModel loader = {}) {
  double best = std::numeric_limits<double>::infinity();
  const size_t n = blocks.size();
  for (uint64_t bits = 0; bits < (uint64_t{1} << n); ++bits) {
    std::vector<bool> use(n);
    for (size_t i = 0; i < n; ++i) use[i] = (bits >> i) & 1;
    best = std::min(best, pipeline_latency(blocks, use, loader));
  }
  return best;
}

}  // namespace

TEST_CASE("planner matches brute force on random instances", "[planner]") {
  std::mt19937 random(1234);
  std::uniform_real_distribution<double> uniform(0.1, 2.0);
  int greedy_suboptimal = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const size_t n = 1 + trial % 12;
    std::vector<BlockTimes> blocks(n);
    for (auto& block : blocks) {
      block.compute_without_cache = uniform(random);
      block.compute_with_cache = block.compute_without_cache * std::uniform_real_distribution<double>(0.05, 1.0)(random);
      block.load = uniform(random) * (trial % 3 == 0 ? 3.0 : 1.0);
    }
    const PipelinePlan plan = plan_pipeline(blocks);
    const double best = brute_force_best(blocks);
    INFO("trial " << trial << " blocks " << n);
    REQUIRE(plan.use_cache.size() == n);
    REQUIRE(plan.latency == Approx(best).epsilon(1e-12));
    REQUIRE(pipeline_latency(blocks, plan.use_cache) == Approx(plan.latency).epsilon(1e-12));
    const PipelinePlan greedy = plan_pipeline_greedy(blocks);
    REQUIRE(greedy.latency >= best - 1e-12);
    if (greedy.latency > best + 1e-9) ++greedy_suboptimal;
  }
  // The paper's greedy rule is not always optimal, which is why the planner solves it exactly.
  WARN("greedy Algorithm 1 was suboptimal on " << greedy_suboptimal << " of 300 instances");
}

TEST_CASE("planner uses the cache when loading is free and skips it when loading is slow", "[planner]") {
  std::vector<BlockTimes> cheap_loads(8, BlockTimes{0.2, 1.0, 0.0});
  auto plan = plan_pipeline(cheap_loads);
  for (bool use : plan.use_cache) CHECK(use);
  CHECK(plan.latency == Approx(8 * 0.2));

  // Even one load takes longer than computing the whole model: never worth it.
  std::vector<BlockTimes> slow_loads(8, BlockTimes{0.2, 1.0, 50.0});
  plan = plan_pipeline(slow_loads);
  for (bool use : plan.use_cache) CHECK_FALSE(use);
  CHECK(plan.latency == Approx(8.0));

  // Loads slightly slower than cached compute: the first block computes fully while the loads
  // of later blocks get ahead (the bubble-free pattern of the paper's Fig. 9).
  std::vector<BlockTimes> balanced(6, BlockTimes{0.5, 1.0, 0.6});
  plan = plan_pipeline(balanced);
  CHECK_FALSE(plan.use_cache[0]);
  CHECK(plan.latency < 6 * 1.0);
  CHECK(plan.latency <= pipeline_latency(balanced, std::vector<bool>(6, true)));
}

TEST_CASE("planner handles an empty model", "[planner]") {
  auto plan = plan_pipeline({});
  CHECK(plan.use_cache.empty());
  CHECK(plan.latency == 0);
}

TEST_CASE("a loader that may run only a few blocks ahead: modelled, and planned for", "[planner]") {
  // A long first block, then two slow loads: unbounded, the loads overlap the first block; one
  // block ahead, the third load waits until the second block is taken.
  const std::vector<BlockTimes> blocks{{5, 5, 0.1}, {0.1, 5, 3}, {0.1, 5, 3}};
  const std::vector<bool> all(3, true);
  CHECK(pipeline_latency(blocks, all) == Approx(6.2));
  CHECK(pipeline_latency(blocks, all, {1}) == Approx(8.2));
  CHECK(pipeline_latency(blocks, all, {3}) == Approx(6.2));  // a window as long as the plan: unbounded

  std::mt19937 random(99);
  std::uniform_real_distribution<double> uniform(0.1, 2.0);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t n = 2 + trial % 10;
    std::vector<BlockTimes> random_blocks(n);
    for (auto& block : random_blocks) {
      block.compute_without_cache = uniform(random) * 2;
      block.compute_with_cache = uniform(random) * 0.5;
      block.load = uniform(random);
    }
    for (int lookahead : {1, 2}) {
      const PipelinePlan plan = plan_pipeline(random_blocks, {lookahead});
      const double latency = pipeline_latency(random_blocks, plan.use_cache, {lookahead});
      REQUIRE(plan.latency == Approx(latency).epsilon(1e-12));
      const double best = brute_force_best(random_blocks, {lookahead});
      REQUIRE(latency >= best - 1e-9);
      // Never worse than the unbounded plan run with the real loader, nor than all-cache / all-full.
      CHECK(latency <= pipeline_latency(random_blocks, plan_pipeline(random_blocks).use_cache, {lookahead}) + 1e-9);
      CHECK(latency <= pipeline_latency(random_blocks, std::vector<bool>(n, true), {lookahead}) + 1e-9);
      CHECK(latency <= pipeline_latency(random_blocks, std::vector<bool>(n, false), {lookahead}) + 1e-9);
      CHECK(latency == Approx(best).epsilon(1e-9));  // exact
    }
  }
}
