#include <catch2/catch.hpp>
#include <chrono>

#include "core/error.h"
#include "serve/load_balancer.h"

using namespace flashps::serve;

namespace {

RequestWork request_with(double ratio, int steps = 28) {
  const DeviceProfile profile = h800_flux_profile();
  RequestWork work;
  work.steps = steps;
  work.image_tokens = profile.image_tokens;
  work.text_tokens = profile.text_tokens;
  work.masked_tokens = static_cast<int64_t>(ratio * profile.image_tokens);
  work.cached = true;
  return work;
}

void load(WorkerBatcher& worker, RequestId& next, std::initializer_list<double> ratios) {
  for (double ratio : ratios) {
    worker.assign(next, request_with(ratio));
    worker.mark_prepared(next, request_with(ratio));
    ++next;
  }
}

}  // namespace

TEST_CASE("the mask-aware scheduler picks the worker with the lowest cost", "[serve][scheduler]") {
  const DeviceProfile profile = h800_flux_profile();
  std::vector<const DeviceProfile*> profiles(3, &profile);
  WorkerBatcher a(batching_config("cb", 8)), b(batching_config("cb", 8)), c(batching_config("cb", 8));
  RequestId next = 1;
  load(a, next, {0.9, 0.8});               // two large masks
  load(b, next, {0.05, 0.05, 0.05});       // three small ones: more requests, less work
  load(c, next, {0.3, 0.3, 0.3, 0.3});
  const std::vector<const WorkerBatcher*> workers{&a, &b, &c};
  const RequestWork incoming = request_with(0.2);

  LoadBalancer mask_aware(BalancePolicy::mask_aware, profiles, 8);
  std::vector<double> costs;
  for (const WorkerBatcher* worker : workers)
    costs.push_back(mask_aware.mask_aware_cost(incoming, worker->outstanding(), profile));
  const size_t cheapest = std::min_element(costs.begin(), costs.end()) - costs.begin();
  CHECK(cheapest == 1);
  CHECK(mask_aware.choose(incoming, workers) == cheapest);
  // More work always costs more: the cost grows with the outstanding masks.
  CHECK(costs[0] > costs[1]);
  CHECK(costs[2] > costs[1]);

  LoadBalancer by_count(BalancePolicy::request_count, profiles, 8);
  CHECK(by_count.choose(incoming, workers) == 0);  // fewest requests, most work
  LoadBalancer by_tokens(BalancePolicy::token_count, profiles, 8);
  CHECK(by_tokens.choose(incoming, workers) == 1);
  LoadBalancer in_turn(BalancePolicy::round_robin, profiles, 8);
  CHECK(in_turn.choose(incoming, workers) == 0);
  CHECK(in_turn.choose(incoming, workers) == 1);
  CHECK(in_turn.choose(incoming, workers) == 2);
  CHECK(in_turn.choose(incoming, workers) == 0);
}

TEST_CASE("a request about to finish weighs less in the mask-aware cost", "[serve][scheduler]") {
  const DeviceProfile profile = h800_flux_profile();
  LoadBalancer balancer(BalancePolicy::mask_aware, {&profile}, 8);
  RequestWork finishing = request_with(0.9, 1), fresh = request_with(0.9, 28);
  const RequestWork incoming = request_with(0.2);
  CHECK(balancer.mask_aware_cost(incoming, {finishing}, profile) < balancer.mask_aware_cost(incoming, {fresh}, profile));
}

TEST_CASE("policies are named, and unknown names are errors", "[serve][scheduler]") {
  for (const char* name : {"round-robin", "request-count", "token-count", "mask-aware"})
    CHECK(std::string(balance_policy_name(balance_policy_from_name(name))) == name);
  CHECK_THROWS_WITH(balance_policy_from_name("random"), Catch::Contains("mask-aware"));
}
