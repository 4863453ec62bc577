// Pre-/post-processing (start_edit, finish_edit, preview decoding) and the pool threads that run
// it off the step loop (disaggregated batching); naive batching runs the same code inline on a worker.
#include "serve/engine_pool.h"

#include "serve/engine_core.h"

namespace flashps::serve {

std::deque<PrePostPool::Task>::iterator PrePostPool::next_task() {
  for (auto task = queue.begin(); task != queue.end(); ++task)
    if (task->preview || task->state->previews_pending == 0) return task;
  return queue.end();
}

// Under the mutex, after a step: a preview snapshot, decoded off the step loop (inline in
// naive mode, like all its pre-/post-processing).
void EngineCore::request_preview(const std::shared_ptr<RequestState>& state, const StepwisePipeline& pipeline) {
  const int every = state->options.preview_every_steps;
  if (every <= 0 || !state->job || state->job->failed() || state->job->steps_done() % every != 0) return;
  PrePostPool::Task task{state, false, pipeline.preview(*state->job), event_of(*state, RequestStatus::running)};
  if (options_.batching.disaggregated) {
    ++state->previews_pending;
    pool_.push(std::move(task));
  } else {
    task.event.preview = std::make_shared<const Image>(task.preview());
    events_.deliver(state, task.event);
  }
}

// Pre-processing by whichever thread holds `lock` (a worker inline, or the pool): marks the
// request preparing, prepares it without the lock, then admits or resolves it.
void EngineCore::prepare_unlocked(const std::shared_ptr<RequestState>& state, std::unique_lock<std::mutex>& lock) {
  state->phase = Phase::preparing;
  state->status = RequestStatus::preparing;
  lock.unlock();
  std::exception_ptr error = prepare(state);
  lock.lock();
  finish_preparing(state, error);
}

// Called without the lock (from prepare() and finish()), so it takes it briefly.
void EngineCore::count_phase(int64_t& runs, double& total_seconds, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++runs;
  total_seconds += seconds;
}

std::exception_ptr EngineCore::prepare(const std::shared_ptr<RequestState>& state) {
  events_.deliver(state, event_of(*state, RequestStatus::preparing));
  try {
    const auto start = Clock::now();
    state->job = workers_[state->worker]->device.pipeline->start_edit(state->request);
    count_phase(counters_.prepared, counters_.prepare_seconds, seconds_between(start, Clock::now()));
    state->request.image = Image();  // prepared: the job holds what it needs
    state->request.mask = Image();
    return nullptr;
  } catch (...) {
    state->job.reset();
    return std::current_exception();
  }
}

// Under the mutex, after prepare().
void EngineCore::finish_preparing(const std::shared_ptr<RequestState>& state, std::exception_ptr error) {
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
  } else if (state->job->steps_total() == 0 && options_.batching.disaggregated) {
    // Nothing to denoise (an empty mask returns the template): straight to post-processing; a
    // batch step would refuse a job that has finished denoising.
    batcher.remove(state->id);
    state->phase = Phase::finishing;
    state->status = RequestStatus::finishing;
    pool_.push({state, true, {}, {}});
  } else {
    state->phase = Phase::ready;
    state->status = RequestStatus::ready;
    batcher.mark_prepared(state->id, state->job->work());
    events_.deliver(state, event_of(*state, RequestStatus::ready));
  }
  wake(*workers_[state->worker]);
}

EditResult EngineCore::finish(const std::shared_ptr<RequestState>& state, std::exception_ptr& error) {
  events_.deliver(state, event_of(*state, RequestStatus::finishing));
  try {
    const auto start = Clock::now();
    EditResult result = workers_[state->worker]->device.pipeline->finish_edit(*state->job);
    count_phase(counters_.finished, counters_.finish_seconds, seconds_between(start, Clock::now()));
    return result;
  } catch (...) {
    error = std::current_exception();
    return {};
  }
}

void EngineCore::pool_loop() {
  lower_compute_priority();
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    pool_.wake.wait(lock, [&] { return (pool_.stopping && pool_.queue.empty()) || pool_.next_task() != pool_.queue.end(); });
    if (pool_.queue.empty()) break;  // stopping, and nothing left
    const auto next = pool_.next_task();
    PrePostPool::Task task = std::move(*next);
    pool_.queue.erase(next);
    std::shared_ptr<RequestState> state = task.state;
    if (task.preview) {
      if (state->phase != Phase::resolved) {
        lock.unlock();
        try {
          task.event.preview = std::make_shared<const Image>(task.preview());
          events_.deliver(state, task.event);
        } catch (...) {  // a preview is best-effort: the edit itself goes on
        }
        lock.lock();
      }
      --state->previews_pending;
      pool_.wake.notify_all();  // its post-processing may be waiting for it
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

}  // namespace flashps::serve
