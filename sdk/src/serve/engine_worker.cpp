// The workers' step loop (continuous batching): one thread per device picks its batcher's next
// action, steps the pipeline on a batch without the lock, and handles failures and pausing.
#include "serve/engine_core.h"

#include <algorithm>
#include <mutex>

#include "core/diagnostics/log.h"
#include "core/runtime/thread_clock.h"
#include "core/runtime/thread_priority.h"

namespace flashps::serve {

void EngineCore::set_busy(Worker& worker, bool busy) {
  worker.busy = busy;
  if (!busy) workers_quiet_.notify_all();
}

void EngineCore::wake(Worker& worker) {
  ++worker.wakeups;
  worker.wakeup.notify_all();
}

// Pausing waits for work a worker already started on its pipeline (a step, inline pre-/post-
// processing): once it returns, no worker touches its pipeline's step path until resumed, so a
// caller may run the pipeline itself (e.g. register a template).
void EngineCore::set_paused(bool paused) {
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

// Before the thread's first tensor op, so the OpenMP team and loader threads it starts inherit it.
void EngineCore::lower_compute_priority() {
  if (options_.compute_nice == 0 || lower_thread_priority(options_.compute_nice)) return;
  static std::once_flag warned;
  std::call_once(warned, [] { log::warning("could not lower the compute threads' priority; they keep the caller's"); });
}

void EngineCore::worker_loop(size_t index) {
  lower_compute_priority();
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
      StepRecord record;
      if (options_.record_steps) {
        record.worker = index;
        for (EditJob* job : jobs) record.batch.push_back(job->work());
        for (const auto& other : workers_) record.others_stepping += other.get() != &worker && other->stepping;
      }
      set_busy(worker, true);
      worker.stepping = true;
      lock.unlock();
      std::exception_ptr batch_error;
      const auto step_start = Clock::now();
      try {
        pipeline.step(jobs);
      } catch (...) {
        batch_error = std::current_exception();
      }
      record.seconds = seconds_between(step_start, Clock::now());
      lock.lock();
      worker.stepping = false;
      set_busy(worker, false);
      if (options_.record_steps && !batch_error) step_log_.push_back(std::move(record));
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
        pool_.push({found->second, true, {}, {}});
      }
    }
  }
}

}  // namespace flashps::serve
