// EngineCore, the implementation behind serve::Engine, and the per-request state its threads
// share. Internal: include only from sdk/src/serve/ (serve/engine.h only forward-declares these).
// Its members are defined one concern per file, named beside each group below.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "serve/engine.h"
#include "serve/engine_events.h"
#include "serve/engine_pool.h"

namespace flashps::serve {

using Clock = std::chrono::steady_clock;

inline double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// Which thread may touch a request's job: the worker while queued/ready/running (between
// steps), the pool or the worker while preparing/finishing.
enum class Phase { queued, preparing, ready, running, finishing, resolved };

struct RequestState : std::enable_shared_from_this<RequestState> {
  RequestId id = 0;
  EditRequest request;
  SubmitOptions options;
  std::promise<EditResult> promise;
  std::shared_future<EditResult> future;
  std::atomic<bool> cancel_requested{false};
  std::atomic<RequestStatus> status{RequestStatus::queued};
  Phase phase = Phase::queued;  // under the engine mutex
  bool waiting = true;          // counted in the queue bound until its first step
  int worker = -1;
  Clock::time_point submitted, deadline = Clock::time_point::max();
  std::atomic<double> queueing{-1}, latency{-1};
  int previews_pending = 0;  // under the engine mutex: preview tasks queued or decoding
  std::unique_ptr<EditJob> job;
};

class EngineCore {
 public:
  // serve/engine_core.cpp: starting and stopping the engine's threads.
  EngineCore(std::vector<EngineDevice> devices, EngineOptions options);
  ~EngineCore() { stop(); }
  void stop();
  void wait_idle();

  // serve/engine_admission.cpp.
  EditHandle submit(EditRequest request, SubmitOptions submit_options, const std::shared_ptr<EngineCore>& self);
  void cancel(const std::shared_ptr<RequestState>& state);

  // serve/engine_worker.cpp.
  void set_paused(bool paused);

  EngineCounters counters() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return counters_;
  }
  std::vector<StepRecord> step_log() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return step_log_;
  }
  const EngineOptions& options() const { return options_; }

 private:
  struct Worker {
    EngineDevice device;
    WorkerBatcher batcher;
    std::thread thread;
    std::condition_variable wakeup;
    uint64_t wakeups = 0;  // changes since: a worker only sleeps if nothing changed
    bool busy = false;     // running pipeline work without the lock (see set_paused)
    bool stepping = false; // of which a batched step
    Worker(EngineDevice device_, const BatchingConfig& config) : device(std::move(device_)), batcher(config) {}
  };

  // serve/engine_admission.cpp: resolving requests, and reaping cancelled and expired ones.
  // Under the mutex. Resolves a request once; later calls do nothing.
  void resolve(const std::shared_ptr<RequestState>& state, RequestStatus status, std::exception_ptr error,
               EditResult* result = nullptr);
  void resolve_error(const std::shared_ptr<RequestState>& state, std::exception_ptr error);
  // Under the mutex: cancelled and expired requests this worker holds between steps.
  void reap(size_t index, Clock::time_point now, Clock::time_point& next_deadline);

  // serve/engine_worker.cpp: the step loop.
  // Under the mutex, around pipeline work a worker does without the lock.
  void set_busy(Worker& worker, bool busy);
  // Under the mutex.
  static void wake(Worker& worker);
  void lower_compute_priority();  // options_.compute_nice, on the calling thread
  void worker_loop(size_t index);

  // serve/engine_pool.cpp: pre-/post-processing and previews, by the pool or inline.
  void request_preview(const std::shared_ptr<RequestState>& state, const StepwisePipeline& pipeline);
  void prepare_unlocked(const std::shared_ptr<RequestState>& state, std::unique_lock<std::mutex>& lock);
  std::exception_ptr prepare(const std::shared_ptr<RequestState>& state);
  void finish_preparing(const std::shared_ptr<RequestState>& state, std::exception_ptr error);
  void count_phase(int64_t& runs, double& total_seconds, double seconds);  // takes the lock
  EditResult finish(const std::shared_ptr<RequestState>& state, std::exception_ptr& error);
  void pool_loop();

  EngineOptions options_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::unique_ptr<LoadBalancer> balancer_;
  std::unordered_map<RequestId, std::shared_ptr<RequestState>> live_;
  PrePostPool pool_;  // under the mutex
  std::condition_variable idle_, workers_quiet_;
  EventDispatcher events_;
  size_t waiting_ = 0;
  RequestId next_id_ = 1;
  bool stopping_ = false;
  bool paused_ = false;
  EngineCounters counters_;
  std::vector<StepRecord> step_log_;  // options_.record_steps
};

}  // namespace flashps::serve
