#include "serve_tools/simulator.h"

#include <chrono>
#include <deque>
#include <queue>
#include <tuple>

#include "core/diagnostics/error.h"
#include "serve/batch_size.h"

namespace flashps::serve {
namespace {

enum class EventKind { arrival, worker_done, pool_done };

struct Event {
  double time;
  uint64_t sequence;  // ties: in order of scheduling, so the run is deterministic
  EventKind kind;
  int device;
  size_t request;
  bool operator>(const Event& other) const { return std::tie(time, sequence) > std::tie(other.time, other.sequence); }
};

struct PoolTask {
  size_t request;
  bool post;  // else pre-processing
};

struct Device {
  WorkerBatcher batcher;
  bool busy = false;
  WorkerAction action;
  int pool_free = 0;
  std::deque<PoolTask> pool_queue;
  std::vector<PoolTask> pool_running;
  explicit Device(const BatchingConfig& config) : batcher(config) {}
};

class Simulation {
 public:
  Simulation(const SimulationOptions& options, const std::vector<TraceRequest>& trace)
      : options_(options), trace_(trace), truth_(options.profile, options.ground_truth) {
    if (options.devices < 1) throw Error("simulation needs at least one device");
    if (options.profile.blocks.empty()) throw Error("simulation profile has no blocks");
    const BatchingConfig batching = batching_for_device(options.batching, options.profile);
    for (int i = 0; i < options.devices; ++i) {
      devices_.emplace_back(batching);
      devices_.back().pool_free = std::max(1, options.pool_threads_per_device);
    }
    std::vector<const DeviceProfile*> profiles(options.devices, &options_.profile);
    balancer_ = std::make_unique<LoadBalancer>(options.policy, profiles, batching.max_batch);
    work_.reserve(trace.size());
    for (const TraceRequest& request : trace) {
      RequestWork work = request.work;
      RequestWork exact = request.exact_work ? *request.exact_work : request.work;
      if (!options.batching.mask_aware) work.cached = exact.cached = false;
      work_.push_back(work);
      exact_work_.push_back(exact);
    }
    result_.outcomes.resize(trace.size());
  }

  SimulationResult run() {
    for (size_t i = 0; i < trace_.size(); ++i) push(trace_[i].arrival, EventKind::arrival, -1, i);
    while (!events_.empty()) {
      const Event event = events_.top();
      events_.pop();
      now_ = event.time;
      switch (event.kind) {
        case EventKind::arrival: arrive(event.request); break;
        case EventKind::worker_done: worker_done(event.device); break;
        case EventKind::pool_done: pool_done(event.device, event.request); break;
      }
    }
    result_.makespan = now_;
    return std::move(result_);
  }

 private:
  void push(double time, EventKind kind, int device, size_t request) {
    events_.push({time, sequence_++, kind, device, request});
  }

  void arrive(size_t request) {
    result_.outcomes[request].arrival = trace_[request].arrival;
    std::vector<const WorkerBatcher*> views;
    for (const Device& device : devices_) views.push_back(&device.batcher);
    const auto start = std::chrono::steady_clock::now();
    const size_t chosen = balancer_->choose(work_[request], views);
    result_.scheduler_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ++result_.decisions;
    result_.outcomes[request].worker = static_cast<int>(chosen);
    Device& device = devices_[chosen];
    device.batcher.assign(request, work_[request]);
    if (options_.batching.disaggregated) submit_pool(static_cast<int>(chosen), {request, false});
    kick(static_cast<int>(chosen));
  }

  void submit_pool(int index, PoolTask task) {
    devices_[index].pool_queue.push_back(task);
    drain_pool(index);
  }

  void drain_pool(int index) {
    Device& device = devices_[index];
    while (device.pool_free > 0 && !device.pool_queue.empty()) {
      PoolTask next = device.pool_queue.front();
      device.pool_queue.pop_front();
      --device.pool_free;
      device.pool_running.push_back(next);
      const double seconds = next.post ? truth_.postprocess_seconds() : truth_.preprocess_seconds();
      push(now_ + seconds, EventKind::pool_done, index, next.request);
    }
  }

  void pool_done(int index, size_t request) {
    Device& device = devices_[index];
    bool post = false;
    for (auto it = device.pool_running.begin(); it != device.pool_running.end(); ++it)
      if (it->request == request) {
        post = it->post;
        device.pool_running.erase(it);
        break;
      }
    ++device.pool_free;
    if (post) {
      finish(request);
    } else {
      device.batcher.mark_prepared(request, exact_work_[request]);
      kick(index);
    }
    drain_pool(index);
  }

  void kick(int index) {
    Device& device = devices_[index];
    if (device.busy) return;
    device.action = device.batcher.next_action();
    double seconds = 0;
    switch (device.action.kind) {
      case WorkerAction::idle: return;
      case WorkerAction::prepare: seconds = truth_.preprocess_seconds(); break;
      case WorkerAction::finish: seconds = truth_.postprocess_seconds(); break;
      case WorkerAction::step: {
        std::vector<RequestWork> batch;
        for (RequestId id : device.action.requests) {
          batch.push_back(exact_work_[id]);
          if (result_.outcomes[id].first_step < 0) result_.outcomes[id].first_step = now_;
        }
        int stepping = 0;  // other devices of the host mid-step (a shared host slows each of them)
        for (const Device& other : devices_)
          stepping += &other != &device && other.busy && other.action.kind == WorkerAction::step;
        seconds = truth_.step_seconds(batch, stepping);
        break;
      }
    }
    device.busy = true;
    push(now_ + seconds, EventKind::worker_done, index, 0);
  }

  void worker_done(int index) {
    Device& device = devices_[index];
    device.busy = false;
    const WorkerAction action = std::move(device.action);
    switch (action.kind) {
      case WorkerAction::prepare:
        device.batcher.mark_prepared(action.requests[0], exact_work_[action.requests[0]]);
        break;
      case WorkerAction::finish:
        device.batcher.mark_finished(action.requests[0]);
        finish(action.requests[0]);
        break;
      case WorkerAction::step:
        for (RequestId id : device.batcher.step_done(action.requests))
          if (options_.batching.disaggregated) submit_pool(index, {id, true});
        break;
      case WorkerAction::idle: break;
    }
    kick(index);
  }

  void finish(size_t request) {
    result_.outcomes[request].finish = now_;
    result_.completion_order.push_back(request);
  }

  const SimulationOptions& options_;
  const std::vector<TraceRequest>& trace_;
  std::vector<RequestWork> work_;        // as estimated at submission: what routing sees
  std::vector<RequestWork> exact_work_;  // as prepared: what steps run
  std::vector<Device> devices_;
  StepGroundTruth truth_;
  std::unique_ptr<LoadBalancer> balancer_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  uint64_t sequence_ = 0;
  double now_ = 0;
  SimulationResult result_;
};

}  // namespace

SimulationResult simulate(const SimulationOptions& options, const std::vector<TraceRequest>& trace) {
  return Simulation(options, trace).run();
}

}  // namespace flashps::serve
