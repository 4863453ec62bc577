// A fixed set of threads running submitted tasks, with a cap on tasks held at once (running or
// waiting): past it, try_submit refuses and the caller answers 503 at once, rather than let a
// flood wait unanswered behind long edits and event streams.
#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace flashps::http {

class WorkerPool {
 public:
  WorkerPool(int threads, int max_held);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // False when `max_held` tasks are held already (or the pool stopped).
  bool try_submit(std::function<void()> task);
  bool full() const;
  int held() const;
  // Runs what was submitted, then joins the threads. Idempotent.
  void stop();

 private:
  void run();

  const int max_held_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> waiting_;
  int held_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace flashps::http
