#include "serve/engine.h"

#include "core/thread_clock.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>

namespace flashps::serve {

using Clock = std::chrono::steady_clock;

const char* request_status_name(RequestStatus status) {
  switch (status) {
    case RequestStatus::queued: return "queued";
    case RequestStatus::preparing: return "preparing";
    case RequestStatus::ready: return "ready";
    case RequestStatus::running: return "running";
    case RequestStatus::finishing: return "finishing";
    case RequestStatus::done: return "done";
    case RequestStatus::failed: return "failed";
    case RequestStatus::cancelled: return "cancelled";
    case RequestStatus::rejected: return "rejected";
  }
  return "?";
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

namespace {

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

class EngineCore {
 public:
  EngineCore(std::vector<EngineDevice> devices, EngineOptions options) : options_(std::move(options)) {
    if (devices.empty()) throw Error("engine needs at least one device");
    std::vector<const DeviceProfile*> profiles;
    for (EngineDevice& device : devices) {
      if (!device.pipeline) throw Error("engine device \"" + device.name + "\" has no pipeline");
      if (device.profile.blocks.empty()) throw Error("engine device \"" + device.name + "\" has no latency profile");
      workers_.push_back(std::make_unique<Worker>(std::move(device), options_.batching));
    }
    for (const auto& worker : workers_) profiles.push_back(&worker->device.profile);
    balancer_ = std::make_unique<LoadBalancer>(options_.policy, profiles, options_.batching.max_batch);
    dispatcher_ = std::thread([this] { dispatch_loop(); });
    for (size_t i = 0; i < workers_.size(); ++i) workers_[i]->thread = std::thread([this, i] { worker_loop(i); });
    if (options_.batching.disaggregated)
      for (int i = 0; i < std::max(1, options_.pool_threads); ++i) pool_.emplace_back([this] { pool_loop(); });
  }

  ~EngineCore() { stop(); }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return;
      stopping_ = true;
      for (auto& [id, state] : live_) state->cancel_requested = true;
      for (auto& worker : workers_) wake(*worker);
      pool_wake_.notify_all();
    }
    for (auto& worker : workers_)
      if (worker->thread.joinable()) worker->thread.join();
    // Only now may the pool stop: a worker's last step can still hand it requests to finish.
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pool_stopping_ = true;
      pool_wake_.notify_all();
    }
    for (std::thread& thread : pool_) thread.join();
    {
      std::lock_guard<std::mutex> lock(events_mutex_);
      events_stopping_ = true;
      events_changed_.notify_all();
    }
    if (dispatcher_.joinable()) dispatcher_.join();
  }

  EditHandle submit(EditRequest request, SubmitOptions submit_options, const std::shared_ptr<EngineCore>& self) {
    auto state = std::make_shared<RequestState>();
    state->future = state->promise.get_future().share();
    state->submitted = Clock::now();
    if (submit_options.deadline_seconds > 0)
      state->deadline = state->submitted + std::chrono::duration_cast<Clock::duration>(
                                               std::chrono::duration<double>(submit_options.deadline_seconds));
    if (!options_.batching.mask_aware) request.mode = ComputeMode::full;
    // The pipeline reports every step here: events, and cancellation at step boundaries.
    RequestState* raw = state.get();
    ProgressCallback user_progress = std::move(request.progress);
    request.progress = [this, raw, user_progress](const ProgressEvent& event) {
      bool keep_going = !user_progress || user_progress(event);
      if (event.stage == "denoise")
        deliver(raw->shared_from_this(), {raw->id, RequestStatus::running, event.step, event.total_steps,
                                          seconds_between(raw->submitted, Clock::now()), raw->worker, {}, {}});
      return keep_going && !raw->cancel_requested;
    };
    const engine::RequestWork estimate = workers_.front()->device.pipeline->estimate_work(request);
    state->request = std::move(request);
    state->options = std::move(submit_options);

    EditHandle handle;
    handle.state_ = state;
    handle.core_ = self;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      state->id = next_id_++;
      ++counters_.submitted;
      if (stopping_ || waiting_ >= options_.max_queued) {
        const std::string why = stopping_ ? "the engine is shutting down"
                                          : "queue full: " + std::to_string(waiting_) + " requests waiting (max_queued " +
                                                std::to_string(options_.max_queued) + ")";
        state->waiting = false;
        resolve(state, RequestStatus::rejected, std::make_exception_ptr(RequestRejected("request rejected: " + why)));
      } else {
        std::vector<const WorkerBatcher*> views;
        for (const auto& worker : workers_) views.push_back(&worker->batcher);
        const auto start = Clock::now();
        const size_t chosen = balancer_->choose(estimate, views);
        counters_.decision_seconds += seconds_between(start, Clock::now());
        ++counters_.decisions;
        state->worker = static_cast<int>(chosen);
        workers_[chosen]->batcher.assign(state->id, estimate);
        live_[state->id] = state;
        ++waiting_;
        deliver(state, event_of(*state, RequestStatus::queued));
        if (options_.batching.disaggregated) {
          pool_queue_.push_back({state, false, {}, {}});
          pool_wake_.notify_one();
        }
        wake(*workers_[chosen]);
      }
    }
    return handle;
  }

  void cancel(const std::shared_ptr<RequestState>& state) {
    state->cancel_requested = true;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (state->phase == Phase::queued || state->phase == Phase::ready) {
        workers_[state->worker]->batcher.remove(state->id);
        resolve(state, RequestStatus::cancelled, std::make_exception_ptr(Cancelled()));
      }
      if (state->worker >= 0) wake(*workers_[state->worker]);
    }
  }

  void wait_idle() {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      idle_.wait(lock, [&] { return live_.empty(); });
    }
    std::unique_lock<std::mutex> lock(events_mutex_);
    events_drained_.wait(lock, [&] { return events_.empty() && !delivering_; });
  }

  // Pausing waits for work a worker already started on its pipeline (a step, inline pre-/post-
  // processing): once it returns, no worker touches its pipeline's step path until resumed, so a
  // caller may run the pipeline itself (e.g. register a template).
  void set_paused(bool paused) {
    std::unique_lock<std::mutex> lock(mutex_);
    paused_ = paused;
    for (auto& worker : workers_) wake(*worker);
    if (paused)
      workers_quiet_.wait(lock, [&] {
        for (const auto& worker : workers_)
          if (worker->busy) return false;
        return true;
      });
  }

  EngineCounters counters() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return counters_;
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
    Worker(EngineDevice device_, const BatchingConfig& config) : device(std::move(device_)), batcher(config) {}
  };
  struct PoolTask {
    std::shared_ptr<RequestState> state;
    bool finish;  // else prepare
    std::function<Image()> preview;  // set: decode a preview instead
    ServeEvent event;
  };

  // Under the mutex, around pipeline work a worker does without the lock.
  void set_busy(Worker& worker, bool busy) {
    worker.busy = busy;
    if (!busy) workers_quiet_.notify_all();
  }

  // Under the mutex.
  static void wake(Worker& worker) {
    ++worker.wakeups;
    worker.wakeup.notify_all();
  }

  static ServeEvent event_of(const RequestState& state, RequestStatus status, std::string message = {}) {
    ServeEvent event;
    event.id = state.id;
    event.status = status;
    event.seconds = seconds_between(state.submitted, Clock::now());
    event.worker = state.worker;
    event.message = std::move(message);
    if (state.job) {
      event.step = state.job->steps_done();
      event.steps = state.job->steps_total();
    }
    return event;
  }

  // Events go through one queue and one thread, so each request's events arrive in the order
  // its state changed, whichever engine thread changed it, and callbacks never run under the
  // engine's lock. Callable with or without the engine mutex held (lock order: engine, events).
  void deliver(const std::shared_ptr<RequestState>& state, ServeEvent event) {
    if (!state->options.on_event) return;
    std::lock_guard<std::mutex> lock(events_mutex_);
    events_.emplace_back(state, std::move(event));
    events_changed_.notify_one();
  }

  void dispatch_loop() {
    std::unique_lock<std::mutex> lock(events_mutex_);
    while (true) {
      events_changed_.wait(lock, [&] { return events_stopping_ || !events_.empty(); });
      if (events_.empty()) break;  // stopping, and everything delivered
      auto [state, event] = std::move(events_.front());
      events_.pop_front();
      delivering_ = true;
      lock.unlock();
      try {
        state->options.on_event(event);
      } catch (...) {  // a throwing callback must not take the engine down
      }
      lock.lock();
      delivering_ = false;
      if (events_.empty()) events_drained_.notify_all();
    }
  }

  // Under the mutex. Resolves a request once; later calls do nothing.
  void resolve(const std::shared_ptr<RequestState>& state, RequestStatus status, std::exception_ptr error,
               EditResult* result = nullptr) {
    if (state->phase == Phase::resolved) return;
    state->phase = Phase::resolved;
    if (state->waiting) {
      state->waiting = false;
      --waiting_;
    }
    state->latency = seconds_between(state->submitted, Clock::now());
    state->status = status;
    std::string message;
    if (result) {
      state->promise.set_value(std::move(*result));
    } else {
      try {
        std::rethrow_exception(error);
      } catch (const std::exception& caught) {
        message = caught.what();
      } catch (...) {
        message = "unknown error";
      }
      state->promise.set_exception(error);
    }
    switch (status) {
      case RequestStatus::done: ++counters_.done; break;
      case RequestStatus::cancelled: ++counters_.cancelled; break;
      case RequestStatus::rejected: ++counters_.rejected; break;
      default: ++counters_.failed; break;
    }
    ServeEvent event = event_of(*state, status, message);  // with the job's progress, before it goes
    state->job.reset();  // stops cache loaders; only the owning thread calls resolve for a job in use
    deliver(state, std::move(event));
    const RequestId id = state->id;  // `state` may be the entry erased here
    live_.erase(id);
    if (live_.empty()) idle_.notify_all();
  }

  void resolve_error(const std::shared_ptr<RequestState>& state, std::exception_ptr error) {
    RequestStatus status = RequestStatus::failed;
    try {
      std::rethrow_exception(error);
    } catch (const Cancelled&) {
      status = RequestStatus::cancelled;
    } catch (...) {
    }
    resolve(state, status, error);
  }

  // Under the mutex: cancelled and expired requests this worker holds between steps.
  void reap(size_t index, Clock::time_point now, Clock::time_point& next_deadline) {
    std::vector<std::shared_ptr<RequestState>> expired, cancelled;
    for (const auto& [id, state] : live_) {
      if (state->worker != static_cast<int>(index)) continue;
      if (state->phase != Phase::queued && state->phase != Phase::ready && state->phase != Phase::running) continue;
      if (state->cancel_requested) cancelled.push_back(state);
      else if (state->deadline <= now) expired.push_back(state);
      else next_deadline = std::min(next_deadline, state->deadline);
    }
    for (const auto& state : cancelled) {
      workers_[index]->batcher.remove(state->id);
      resolve(state, RequestStatus::cancelled, std::make_exception_ptr(Cancelled()));
    }
    for (const auto& state : expired) {
      workers_[index]->batcher.remove(state->id);
      resolve(state, RequestStatus::failed,
              std::make_exception_ptr(DeadlineExceeded(
                  "deadline of " + std::to_string(state->options.deadline_seconds) + " s exceeded while " +
                  (state->phase == Phase::running ? "denoising" : "queued"))));
    }
  }

  void worker_loop(size_t index) {
    Worker& worker = *workers_[index];
    StepwisePipeline& pipeline = *worker.device.pipeline;
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      const auto iteration_start = Clock::now();
      const double iteration_cpu_start = thread_cpu_seconds();
      Clock::time_point next_deadline = Clock::time_point::max();
      reap(index, iteration_start, next_deadline);
      if (stopping_ && worker.batcher.request_count() == 0) break;
      const uint64_t wakeups = worker.wakeups;
      const WorkerAction action = paused_ && !stopping_ ? WorkerAction{} : worker.batcher.next_action();
      if (action.kind == WorkerAction::idle) {
        if (worker.wakeups != wakeups) continue;  // something changed meanwhile
        if (next_deadline == Clock::time_point::max()) worker.wakeup.wait(lock);
        else worker.wakeup.wait_until(lock, next_deadline);
        continue;
      }
      if (action.kind == WorkerAction::prepare) {
        // A copy, not a reference into live_: resolving the request erases its entry.
        const std::shared_ptr<RequestState> state = live_.at(action.requests[0]);
        set_busy(worker, true);
        prepare_unlocked(state, lock);
        set_busy(worker, false);
      } else if (action.kind == WorkerAction::finish) {
        std::shared_ptr<RequestState> state = live_.at(action.requests[0]);
        state->phase = Phase::finishing;
        state->status = RequestStatus::finishing;
        set_busy(worker, true);
        lock.unlock();
        std::exception_ptr error;
        EditResult result = finish(state, error);
        lock.lock();
        set_busy(worker, false);
        worker.batcher.mark_finished(state->id);
        if (error) resolve_error(state, error);
        else resolve(state, RequestStatus::done, nullptr, &result);
      } else {
        std::vector<std::shared_ptr<RequestState>> batch;
        std::vector<EditJob*> jobs;
        for (RequestId id : action.requests) {
          std::shared_ptr<RequestState> state = live_.at(id);
          if (state->phase != Phase::running) {
            state->phase = Phase::running;
            state->status = RequestStatus::running;
            state->queueing = seconds_between(state->submitted, iteration_start);
            if (state->waiting) {
              state->waiting = false;
              --waiting_;
            }
          }
          jobs.push_back(state->job.get());
          batch.push_back(std::move(state));
        }
        const double batching_seconds = seconds_between(iteration_start, Clock::now());
        const double batching_cpu_seconds = thread_cpu_seconds() - iteration_cpu_start;
        set_busy(worker, true);
        lock.unlock();
        std::exception_ptr batch_error;
        try {
          pipeline.step(jobs);
        } catch (...) {
          batch_error = std::current_exception();
        }
        lock.lock();
        set_busy(worker, false);
        const double assembly = batching_seconds + pipeline.last_step_assembly_seconds();
        ++counters_.steps;
        counters_.assembly_seconds += assembly;
        counters_.max_assembly_seconds = std::max(counters_.max_assembly_seconds, assembly);
        counters_.assembly_cpu_seconds += batching_cpu_seconds + pipeline.last_step_assembly_cpu_seconds();
        const std::vector<RequestId> finished = worker.batcher.step_done(action.requests);
        if (!batch_error)
          for (const auto& state : batch) request_preview(state, pipeline);
        for (const auto& state : batch) {
          if (!batch_error && !state->job->failed()) continue;
          worker.batcher.remove(state->id);
          resolve_error(state, batch_error ? batch_error : state->job->error());
        }
        for (RequestId id : finished) {
          auto found = live_.find(id);
          if (found == live_.end() || !options_.batching.disaggregated) continue;
          found->second->phase = Phase::finishing;
          found->second->status = RequestStatus::finishing;
          pool_queue_.push_back({found->second, true, {}, {}});
          pool_wake_.notify_one();
        }
      }
    }
  }

  // Under the mutex, after a step: a preview snapshot, decoded off the step loop (inline in
  // naive mode, like all its pre-/post-processing).
  void request_preview(const std::shared_ptr<RequestState>& state, const StepwisePipeline& pipeline) {
    const int every = state->options.preview_every_steps;
    if (every <= 0 || !state->job || state->job->failed() || state->job->steps_done() % every != 0) return;
    PoolTask task{state, false, pipeline.preview(*state->job), event_of(*state, RequestStatus::running)};
    if (options_.batching.disaggregated) {
      ++state->previews_pending;
      pool_queue_.push_back(std::move(task));
      pool_wake_.notify_one();
    } else {
      task.event.preview = std::make_shared<const Image>(task.preview());
      deliver(state, task.event);
    }
  }

  // Pre-processing by whichever thread holds `lock` (a worker inline, or the pool): marks the
  // request preparing, prepares it without the lock, then admits or resolves it.
  void prepare_unlocked(const std::shared_ptr<RequestState>& state, std::unique_lock<std::mutex>& lock) {
    state->phase = Phase::preparing;
    state->status = RequestStatus::preparing;
    lock.unlock();
    std::exception_ptr error = prepare(state);
    lock.lock();
    finish_preparing(state, error);
  }

  std::exception_ptr prepare(const std::shared_ptr<RequestState>& state) {
    deliver(state, event_of(*state, RequestStatus::preparing));
    try {
      state->job = workers_[state->worker]->device.pipeline->start_edit(state->request);
      state->request.image = Image();  // prepared: the job holds what it needs
      state->request.mask = Image();
      return nullptr;
    } catch (...) {
      state->job.reset();
      return std::current_exception();
    }
  }

  // Under the mutex, after prepare().
  void finish_preparing(const std::shared_ptr<RequestState>& state, std::exception_ptr error) {
    WorkerBatcher& batcher = workers_[state->worker]->batcher;
    if (error) {
      batcher.remove(state->id);
      resolve_error(state, error);
    } else if (state->cancel_requested) {
      batcher.remove(state->id);
      resolve(state, RequestStatus::cancelled, std::make_exception_ptr(Cancelled()));
    } else if (state->deadline <= Clock::now()) {
      batcher.remove(state->id);
      resolve(state, RequestStatus::failed,
              std::make_exception_ptr(DeadlineExceeded("deadline of " + std::to_string(state->options.deadline_seconds) +
                                                       " s exceeded while preparing")));
    } else {
      state->phase = Phase::ready;
      state->status = RequestStatus::ready;
      batcher.mark_prepared(state->id, state->job->work());
      deliver(state, event_of(*state, RequestStatus::ready));
    }
    wake(*workers_[state->worker]);
  }

  EditResult finish(const std::shared_ptr<RequestState>& state, std::exception_ptr& error) {
    deliver(state, event_of(*state, RequestStatus::finishing));
    try {
      return workers_[state->worker]->device.pipeline->finish_edit(*state->job);
    } catch (...) {
      error = std::current_exception();
      return {};
    }
  }

  // Under the mutex: the first task a pool thread may take. A request's post-processing waits
  // for its previews, so with several pool threads its events still arrive in order.
  std::deque<PoolTask>::iterator next_pool_task() {
    for (auto task = pool_queue_.begin(); task != pool_queue_.end(); ++task)
      if (task->preview || task->state->previews_pending == 0) return task;
    return pool_queue_.end();
  }

  void pool_loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      pool_wake_.wait(lock, [&] { return (pool_stopping_ && pool_queue_.empty()) || next_pool_task() != pool_queue_.end(); });
      if (pool_queue_.empty()) break;  // stopping, and nothing left
      const auto next = next_pool_task();
      PoolTask task = std::move(*next);
      pool_queue_.erase(next);
      std::shared_ptr<RequestState> state = task.state;
      if (task.preview) {
        if (state->phase != Phase::resolved) {
          lock.unlock();
          try {
            task.event.preview = std::make_shared<const Image>(task.preview());
            deliver(state, task.event);
          } catch (...) {  // a preview is best-effort: the edit itself goes on
          }
          lock.lock();
        }
        --state->previews_pending;
        pool_wake_.notify_all();  // its post-processing may be waiting for it
      } else if (state->phase == Phase::resolved) {
        continue;
      } else if (!task.finish) {
        prepare_unlocked(state, lock);
      } else {
        lock.unlock();
        std::exception_ptr error;
        EditResult result = finish(state, error);
        lock.lock();
        if (error) resolve_error(state, error);
        else resolve(state, RequestStatus::done, nullptr, &result);
      }
    }
  }

  EngineOptions options_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::unique_ptr<LoadBalancer> balancer_;
  std::unordered_map<RequestId, std::shared_ptr<RequestState>> live_;
  std::deque<PoolTask> pool_queue_;
  std::condition_variable pool_wake_, idle_, workers_quiet_;
  std::vector<std::thread> pool_;
  std::mutex events_mutex_;
  std::condition_variable events_changed_, events_drained_;
  std::deque<std::pair<std::shared_ptr<RequestState>, ServeEvent>> events_;
  bool delivering_ = false, events_stopping_ = false;
  std::thread dispatcher_;
  size_t waiting_ = 0;
  RequestId next_id_ = 1;
  bool stopping_ = false, pool_stopping_ = false;
  bool paused_ = false;
  EngineCounters counters_;
};

RequestId EditHandle::id() const { return state_ ? state_->id : 0; }
RequestStatus EditHandle::status() const { return state_ ? state_->status.load() : RequestStatus::rejected; }
std::shared_future<EditResult> EditHandle::result() const {
  if (!state_) throw Error("empty edit handle");
  return state_->future;
}
bool EditHandle::wait_for(double seconds) const {
  return result().wait_for(std::chrono::duration<double>(seconds)) == std::future_status::ready;
}
void EditHandle::cancel() {
  if (!state_) return;
  if (auto core = core_.lock()) core->cancel(state_);
  else state_->cancel_requested = true;
}
double EditHandle::queueing_seconds() const { return state_ ? state_->queueing.load() : -1; }
double EditHandle::latency_seconds() const { return state_ ? state_->latency.load() : -1; }
int EditHandle::worker() const { return state_ ? state_->worker : -1; }

Engine::Engine(std::vector<EngineDevice> devices, EngineOptions options)
    : core_(std::make_shared<EngineCore>(std::move(devices), std::move(options))) {}
Engine::~Engine() { core_->stop(); }
EditHandle Engine::submit(EditRequest request, SubmitOptions options) {
  return core_->submit(std::move(request), std::move(options), core_);
}
void Engine::wait_idle() { core_->wait_idle(); }
void Engine::pause() { core_->set_paused(true); }
void Engine::resume() { core_->set_paused(false); }
EngineCounters Engine::counters() const { return core_->counters(); }
const EngineOptions& Engine::options() const { return core_->options(); }

}  // namespace flashps::serve
