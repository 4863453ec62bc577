// Event delivery: building ServeEvents and running clients' callbacks on the dispatcher thread.
// Separate from the engine's request handling because it has its own lock and thread.
#include "serve/engine_events.h"

#include "serve/engine_core.h"

namespace flashps::serve {

ServeEvent event_of(const RequestState& state, RequestStatus status, std::string message) {
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

void EventDispatcher::start() { thread_ = std::thread([this] { dispatch_loop(); }); }

void EventDispatcher::deliver(const std::shared_ptr<RequestState>& state, ServeEvent event) {
  if (!state->options.on_event) return;
  std::lock_guard<std::mutex> lock(mutex_);
  queue_.emplace_back(state, std::move(event));
  changed_.notify_one();
}

void EventDispatcher::wait_drained() {
  std::unique_lock<std::mutex> lock(mutex_);
  drained_.wait(lock, [&] { return queue_.empty() && !delivering_; });
}

void EventDispatcher::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    changed_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

void EventDispatcher::dispatch_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) break;  // stopping, and everything delivered
    auto [state, event] = std::move(queue_.front());
    queue_.pop_front();
    delivering_ = true;
    lock.unlock();
    try {
      state->options.on_event(event);
    } catch (...) {  // a throwing callback must not take the engine down
    }
    lock.lock();
    delivering_ = false;
    if (queue_.empty()) drained_.notify_all();
  }
}

}  // namespace flashps::serve
