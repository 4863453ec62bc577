// How a worker batches requests (FlashPS §4.3), as a state machine without threads or clocks:
// real workers (serve/engine) and simulated devices (serve_tools/simulator) drive the same object, so
// a simulated cluster runs exactly the batching and queueing code that serves requests.
//
//   static      a batch is formed when the worker is idle and runs to the end before the next
//               one starts (diffusers-style serving);
//   continuous  at every step boundary ready requests join, up to the maximum batch size, and
//               finished ones leave.
// Pre-/post-processing is either disaggregated (a separate pool does it; the step loop only
// denoises) or inline (the worker does it between steps, interrupting its running batch: the
// paper's strawman).
#pragma once
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/request_work.h"

namespace flashps::serve {

using engine::RequestWork;

using RequestId = uint64_t;

enum class BatchingMode { static_batching, continuous };

struct BatchingConfig {
  BatchingMode mode = BatchingMode::continuous;
  bool disaggregated = true;
  bool mask_aware = true;  // false: every request is computed in full (no template cache)
  int max_batch = 8;  // 0: per device (serve/batch_size.h), resolved before a worker uses it
};

// The benchmark's configurations: "static-full" (static, inline, full compute: the diffusers
// baseline), "static" (static, disaggregated, mask-aware), "naive-cb" (continuous, inline,
// mask-aware), "cb" (continuous, disaggregated, mask-aware). Error for other names; max_batch 0:
// per device.
BatchingConfig batching_config(const std::string& name, int max_batch);
std::string batching_name(const BatchingConfig& config);

struct WorkerAction {
  enum Kind { idle, prepare, step, finish } kind = idle;
  std::vector<RequestId> requests;  // prepare/finish: one request; step: the batch
};

class WorkerBatcher {
 public:
  explicit WorkerBatcher(BatchingConfig config);
  const BatchingConfig& config() const { return config_; }

  // A request routed here, with its estimated work. Inline workers prepare it themselves
  // (next_action); disaggregated ones wait for mark_prepared().
  void assign(RequestId id, const RequestWork& estimate);
  // Pre-processing finished; `exact` replaces the estimate.
  void mark_prepared(RequestId id, const RequestWork& exact);
  // What the worker should do next.
  WorkerAction next_action();
  // The step of `batch` ran: returns the requests that finished denoising. Inline workers get
  // a finish action for each; disaggregated ones hand them to post-processing and forget them.
  std::vector<RequestId> step_done(const std::vector<RequestId>& batch);
  // An inline finish action completed.
  void mark_finished(RequestId id);
  // Drops a request wherever it is (cancelled, expired, failed); false if it is not here.
  bool remove(RequestId id);

  bool contains(RequestId id) const { return entries_.count(id) != 0; }
  size_t request_count() const { return entries_.size(); }  // everything not yet finished
  int64_t computed_token_count() const;                      // per step, of requests not denoised
  // Requests not yet denoised, running first (steps = steps remaining), for cost estimates.
  std::vector<RequestWork> outstanding() const;
  const std::vector<RequestId>& running() const { return running_; }

 private:
  enum class State { waiting, preparing, ready, running, denoised };
  struct Entry {
    RequestWork work;
    int steps_done = 0;
    State state = State::waiting;
  };
  bool admit_ready();  // moves ready requests into the running batch per the mode

  BatchingConfig config_;
  std::unordered_map<RequestId, Entry> entries_;
  std::deque<RequestId> arrival_order_;  // waiting/preparing/ready, in arrival order
  std::vector<RequestId> running_;
  std::vector<RequestId> forming_;   // static inline: the next batch, being prepared
  std::deque<RequestId> to_finish_;  // inline: denoised, awaiting post-processing
};

}  // namespace flashps::serve
