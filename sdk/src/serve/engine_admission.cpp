// A request's way into and out of the engine: submission under the queue bound and routing to a
// worker, cancellation, deadlines (reaping), and resolving it exactly once. Separate from the
// step loop and the pool, which only move admitted requests between phases.
#include "serve/engine_core.h"

#include <algorithm>
#include <string>

namespace flashps::serve {

EditRequest request_as_run(EditRequest request, const BatchingConfig& batching) {
  if (!batching.mask_aware) request.mode = CacheMode::full;
  return request;
}

EditHandle EngineCore::submit(EditRequest request, SubmitOptions submit_options,
                              const std::shared_ptr<EngineCore>& self) {
  auto state = std::make_shared<RequestState>();
  state->future = state->promise.get_future().share();
  state->submitted = Clock::now();
  if (submit_options.deadline_seconds > 0)
    state->deadline = state->submitted + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(submit_options.deadline_seconds));
  request = request_as_run(std::move(request), options_.batching);
  // The pipeline reports every step here: events, and cancellation at step boundaries.
  RequestState* raw = state.get();
  ProgressCallback user_progress = std::move(request.progress);
  request.progress = [this, raw, user_progress](const ProgressEvent& event) {
    bool keep_going = !user_progress || user_progress(event);
    if (event.stage == "denoise")
      events_.deliver(raw->shared_from_this(), {raw->id, RequestStatus::running, event.step, event.total_steps,
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
      events_.deliver(state, event_of(*state, RequestStatus::queued));
      if (options_.batching.disaggregated) pool_.push({state, false, {}, {}});
      wake(*workers_[chosen]);
    }
  }
  return handle;
}

void EngineCore::cancel(const std::shared_ptr<RequestState>& state) {
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

void EngineCore::resolve(const std::shared_ptr<RequestState>& state, RequestStatus status, std::exception_ptr error,
                         EditResult* result) {
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
  events_.deliver(state, std::move(event));
  const RequestId id = state->id;  // `state` may be the entry erased here
  live_.erase(id);
  if (live_.empty()) idle_.notify_all();
}

void EngineCore::resolve_error(const std::shared_ptr<RequestState>& state, std::exception_ptr error) {
  RequestStatus status = RequestStatus::failed;
  try {
    std::rethrow_exception(error);
  } catch (const Cancelled&) {
    status = RequestStatus::cancelled;
  } catch (...) {
  }
  resolve(state, status, error);
}

void EngineCore::reap(size_t index, Clock::time_point now, Clock::time_point& next_deadline) {
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

}  // namespace flashps::serve
