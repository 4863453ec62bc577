// Requests that take work (an edit or a template capture), from their route's start until their
// answer is written. A drain waits for them as well as for the edits, so a capture in flight, and
// a finished edit's answer, reach their client before the server closes its connections.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace flashps::http {

class AnswersInFlight {
 public:
  class Scope {
   public:
    explicit Scope(AnswersInFlight& answers) : answers_(answers) { ++answers_.count_; }
    ~Scope() {
      // Under the lock, so a waiter between its check and its wait does not miss the wake-up.
      std::lock_guard<std::mutex> lock(answers_.mutex_);
      --answers_.count_;
      answers_.none_.notify_all();
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    AnswersInFlight& answers_;
  };

  // Until none is in flight, up to `seconds`; true when none is.
  bool wait_none(double seconds) {
    std::unique_lock<std::mutex> lock(mutex_);
    const auto timeout = std::chrono::duration<double>(std::max(0.0, seconds));
    return none_.wait_for(lock, timeout, [&] { return count_.load() == 0; });
  }

 private:
  // Sequentially consistent, as the server's `draining` flag: a request counted after a drain
  // began sees that flag set (and is refused), one counted before it is waited for.
  std::atomic<int> count_{0};
  std::mutex mutex_;
  std::condition_variable none_;
};

}  // namespace flashps::http
