#include "serve/load_balancer.h"

#include <algorithm>
#include <limits>

#include "core/diagnostics/error.h"

namespace flashps::serve {

BalancePolicy balance_policy_from_name(const std::string& name) {
  if (name == "round-robin") return BalancePolicy::round_robin;
  if (name == "request-count") return BalancePolicy::request_count;
  if (name == "token-count") return BalancePolicy::token_count;
  if (name == "mask-aware") return BalancePolicy::mask_aware;
  if (name == "finish-time") return BalancePolicy::finish_time;
  throw Error("unknown load-balancing policy \"" + name +
              "\" (round-robin, request-count, token-count, mask-aware, finish-time)");
}

const char* balance_policy_name(BalancePolicy policy) {
  switch (policy) {
    case BalancePolicy::round_robin: return "round-robin";
    case BalancePolicy::request_count: return "request-count";
    case BalancePolicy::token_count: return "token-count";
    case BalancePolicy::mask_aware: return "mask-aware";
    case BalancePolicy::finish_time: return "finish-time";
  }
  return "?";
}

LoadBalancer::LoadBalancer(BalancePolicy policy, std::vector<const DeviceProfile*> profiles, int max_batch)
    : policy_(policy), profiles_(std::move(profiles)), max_batch_(std::max(1, max_batch)) {
  if (profiles_.empty()) throw Error("load balancer: no workers");
}

double LoadBalancer::mask_aware_cost(const RequestWork& request, const std::vector<RequestWork>& outstanding,
                                     const DeviceProfile& profile) const {
  // Everything the worker has outstanding plus the request, as one batch (queued requests
  // count: they are the batch the request joins). A request about to finish slows only the
  // first few of the new request's steps: each weighs the share of those steps it remains for.
  std::vector<RequestWork> batch = outstanding;
  for (RequestWork& work : batch) work.weight = std::min(1.0, double(work.steps) / std::max(1, request.steps));
  batch.push_back(request);
  return estimate_step(profile, batch).seconds;
}

double LoadBalancer::predicted_finish(const RequestWork& request, const std::vector<RequestWork>& outstanding,
                                      const DeviceProfile& profile, int max_batch) const {
  max_batch = std::max(1, max_batch);
  std::vector<RequestWork> waiting = outstanding;  // running first, then queued, in arrival order
  waiting.push_back(request);
  for (RequestWork& work : waiting) {  // every step counts whole; a request runs at least one step
    work.weight = 1.0;
    work.steps = std::max(1, work.steps);
  }
  const size_t incoming = waiting.size() - 1;
  std::vector<size_t> running;
  size_t next_waiting = 0;
  std::vector<RequestWork> batch;
  double seconds = 0;
  while (true) {
    while (running.size() < size_t(max_batch) && next_waiting < waiting.size()) running.push_back(next_waiting++);
    batch.clear();
    for (size_t index : running) batch.push_back(waiting[index]);
    seconds += estimate_step(profile, batch).seconds;
    std::vector<size_t> still_running;
    for (size_t index : running) {
      if (--waiting[index].steps > 0) {
        still_running.push_back(index);
      } else if (index == incoming) {
        return seconds;
      }
    }
    running.swap(still_running);
  }
}

size_t LoadBalancer::choose(const RequestWork& request, const std::vector<const WorkerBatcher*>& workers) {
  if (workers.size() != profiles_.size()) throw Error("load balancer: worker count changed");
  if (policy_ == BalancePolicy::round_robin) return next_++ % workers.size();
  size_t best = 0;
  double best_cost = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < workers.size(); ++i) {
    double cost = 0;
    switch (policy_) {
      case BalancePolicy::request_count: cost = double(workers[i]->request_count()); break;
      case BalancePolicy::token_count: cost = double(workers[i]->computed_token_count()); break;
      case BalancePolicy::finish_time:
        cost = predicted_finish(request, workers[i]->outstanding(), *profiles_[i], workers[i]->config().max_batch);
        break;
      default: cost = mask_aware_cost(request, workers[i]->outstanding(), *profiles_[i]); break;
    }
    if (cost < best_cost) {
      best_cost = cost;
      best = i;
    }
  }
  return best;
}

}  // namespace flashps::serve
