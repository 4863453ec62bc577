// Routing requests across workers (FlashPS §4.4, Algorithm 2). Every policy sees the same view
// of the workers (their outstanding requests); they differ in how they weigh it:
//   round-robin     in turn;
//   request-count   fewest outstanding requests;
//   token-count     fewest tokens computed per step (masked tokens of cached requests);
//   mask-aware      lowest cost: the planner's pipeline latency of one step (Algorithm 1 over
//                   the device's fitted compute and load models) for the worker's outstanding
//                   requests plus the new one (the paper's Algorithm 2), each outstanding
//                   request weighted by the share of the new request's steps it will still be
//                   running for. In the 8-device simulation at high load that weighting took
//                   P95 from 21% to 48% below request-count; multiplying the cost by the
//                   steps a request queues through instead lost 10% throughput.
//   finish-time     earliest predicted finish of the new request: the worker's outstanding
//                   requests and the new one are stepped forward with the device's fitted model
//                   under continuous batching (at most max_batch running, the rest queued in
//                   arrival order) until the new one is done. Unlike mask-aware it sees that a
//                   request beyond the batch limit waits for whole requests to finish.
#pragma once
#include <string>
#include <vector>

#include "serve/batching.h"
#include "serve/device_profile.h"

namespace flashps::serve {

enum class BalancePolicy { round_robin, request_count, token_count, mask_aware, finish_time };
BalancePolicy balance_policy_from_name(const std::string& name);  // Error for unknown names
const char* balance_policy_name(BalancePolicy policy);

class LoadBalancer {
 public:
  // profiles[i]: the latency model of worker i (the pointers must outlive the balancer).
  // max_batch: finish-time's batch limit where a worker's own is not known.
  LoadBalancer(BalancePolicy policy, std::vector<const DeviceProfile*> profiles, int max_batch);

  // The worker for `request`; ties go to the lowest index.
  size_t choose(const RequestWork& request, const std::vector<const WorkerBatcher*>& workers);
  // Mask-aware cost of adding `request` to a worker with `outstanding` requests.
  double mask_aware_cost(const RequestWork& request, const std::vector<RequestWork>& outstanding,
                         const DeviceProfile& profile) const;
  // Seconds until `request` would finish denoising on a worker with `outstanding` requests
  // (running first, in arrival order), if nothing else arrived.
  double predicted_finish(const RequestWork& request, const std::vector<RequestWork>& outstanding,
                          const DeviceProfile& profile) const {
    return predicted_finish(request, outstanding, profile, max_batch_);
  }
  double predicted_finish(const RequestWork& request, const std::vector<RequestWork>& outstanding,
                          const DeviceProfile& profile, int max_batch) const;
  BalancePolicy policy() const { return policy_; }

 private:
  BalancePolicy policy_;
  std::vector<const DeviceProfile*> profiles_;
  int max_batch_;
  size_t next_ = 0;  // round-robin
};

}  // namespace flashps::serve
