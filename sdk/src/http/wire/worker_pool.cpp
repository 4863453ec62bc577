#include "http/wire/worker_pool.h"

namespace flashps::http {

WorkerPool::WorkerPool(int threads, int max_held) : max_held_(max_held) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { run(); });
}

WorkerPool::~WorkerPool() { stop(); }

bool WorkerPool::try_submit(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_ || held_ >= max_held_) return false;
    ++held_;
    waiting_.push_back(std::move(task));
  }
  ready_.notify_one();
  return true;
}

bool WorkerPool::full() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return held_ >= max_held_;
}

int WorkerPool::held() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return held_;
}

void WorkerPool::run() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ready_.wait(lock, [&] { return stopping_ || !waiting_.empty(); });
      if (waiting_.empty()) return;
      task = std::move(waiting_.front());
      waiting_.pop_front();
    }
    task();
    std::lock_guard<std::mutex> lock(mutex_);
    --held_;
  }
}

void WorkerPool::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (std::thread& thread : threads_)
    if (thread.joinable()) thread.join();
}

}  // namespace flashps::http
