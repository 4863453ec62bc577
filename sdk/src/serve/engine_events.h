// Event delivery to clients: one queue and one thread that run SubmitOptions::on_event. Separate
// from EngineCore because it has its own lock and thread and knows nothing of batching.
// Internal to serve/engine; include only from sdk/src/serve/.
#pragma once
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "serve/engine.h"

namespace flashps::serve {

// An event for `state` as it is now: its status, time since submission, worker and the job's
// denoising progress (when it has a job).
ServeEvent event_of(const RequestState& state, RequestStatus status, std::string message = {});

// Events go through one queue and one thread, so each request's events arrive in the order
// its state changed, whichever engine thread changed it, and callbacks never run under the
// engine's lock.
class EventDispatcher {
 public:
  EventDispatcher() = default;
  EventDispatcher(const EventDispatcher&) = delete;
  EventDispatcher& operator=(const EventDispatcher&) = delete;
  ~EventDispatcher() { stop(); }

  void start();  // the dispatcher thread
  // Callable with or without the engine mutex held (lock order: engine, events).
  void deliver(const std::shared_ptr<RequestState>& state, ServeEvent event);
  // Until every queued event was delivered and no callback is running.
  void wait_drained();
  // Delivers what is queued, then joins the thread; later calls do nothing.
  void stop();

 private:
  void dispatch_loop();

  std::mutex mutex_;
  std::condition_variable changed_, drained_;
  std::deque<std::pair<std::shared_ptr<RequestState>, ServeEvent>> queue_;
  bool delivering_ = false, stopping_ = false;
  std::thread thread_;
};

}  // namespace flashps::serve
