#include <catch2/catch.hpp>
#include <chrono>

#include "core/diagnostics/error.h"
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

TEST_CASE("finish-time steps the worker's batch forward, queue included", "[serve][scheduler]") {
  const DeviceProfile profile = h800_flux_profile();
  LoadBalancer balancer(BalancePolicy::finish_time, {&profile}, 2);  // at most 2 running
  const RequestWork finishing = request_with(0.5, 1), queued = request_with(0.3, 28), incoming = request_with(0.2, 28);
  // Step 1 runs the two finishing requests; then the queued one and the new one run 28 steps.
  const double expected = estimate_step(profile, {finishing, finishing}).seconds +
                          28 * estimate_step(profile, {queued, incoming}).seconds;
  CHECK(balancer.predicted_finish(incoming, {finishing, finishing, queued}, profile) == Approx(expected));
  // With nothing outstanding it is the request's own 28 steps.
  CHECK(balancer.predicted_finish(incoming, {}, profile) == Approx(28 * estimate_step(profile, {incoming}).seconds));
}

TEST_CASE("finish-time routes past a worker whose batch is full", "[serve][scheduler]") {
  const DeviceProfile profile = h800_flux_profile();
  std::vector<const DeviceProfile*> profiles(2, &profile);
  WorkerBatcher full(batching_config("cb", 2)), busy(batching_config("cb", 2));
  RequestId next = 1;
  load(full, next, {0.5, 0.5});        // two requests fill the batch: a third waits 28 steps
  load(busy, next, {0.5, 0.5, 0.5});   // one more request, but...
  // ... one of busy's requests is about to finish, so the new one starts there after one step.
  busy.next_action();
  full.next_action();
  for (int step = 0; step < 27; ++step) busy.step_done(busy.running());
  const std::vector<const WorkerBatcher*> workers{&full, &busy};
  const RequestWork incoming = request_with(0.2);
  LoadBalancer finish_time(BalancePolicy::finish_time, profiles, 2);
  const double on_full = finish_time.predicted_finish(incoming, full.outstanding(), profile);
  const double on_busy = finish_time.predicted_finish(incoming, busy.outstanding(), profile);
  CHECK(on_busy < on_full);
  CHECK(finish_time.choose(incoming, workers) == 1);
  LoadBalancer by_count(BalancePolicy::request_count, profiles, 2);
  CHECK(by_count.choose(incoming, workers) == 0);
}
