#include "http/connection_queue.h"

namespace flashps::http {
namespace {

thread_local bool answering_over_capacity = false;
thread_local std::chrono::steady_clock::time_point accepted_at, taken_at;

}  // namespace

ConnectionQueue::ConnectionQueue(int threads, int max_connections, std::atomic<int>& open_connections)
    : max_connections_(max_connections), open_(open_connections) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { serve_loop(false); });
  threads_.emplace_back([this] { serve_loop(true); });
}

ConnectionQueue::~ConnectionQueue() { shutdown(); }

bool ConnectionQueue::over_capacity() { return answering_over_capacity; }
std::chrono::steady_clock::time_point ConnectionQueue::connection_accepted_at() { return accepted_at; }
std::chrono::steady_clock::time_point ConnectionQueue::connection_taken_at() { return taken_at; }

TaskQueueEnqueueResult ConnectionQueue::enqueue(std::function<void()> serve) {
  Connection connection{std::move(serve), std::chrono::steady_clock::now()};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (open_.load() >= max_connections_) {
      rejected_.push_back(std::move(connection));
    } else {
      ++open_;
      accepted_.push_back(std::move(connection));
    }
  }
  ready_.notify_all();
  return TaskQueueEnqueueResult(true);  // void(true) where enqueue returns void
}

void ConnectionQueue::serve_loop(bool rejecting) {
  answering_over_capacity = rejecting;
  auto& queue = rejecting ? rejected_ : accepted_;
  for (;;) {
    Connection connection;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ready_.wait(lock, [&] { return shutdown_ || !queue.empty(); });
      if (queue.empty()) return;  // shut down and drained: httplib joins before closing sockets
      connection = std::move(queue.front());
      queue.pop_front();
    }
    accepted_at = connection.accepted_at;
    taken_at = std::chrono::steady_clock::now();
    connection.serve();  // serves the connection (keep-alive included), then closes its socket
    if (!rejecting) --open_;
  }
}

void ConnectionQueue::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (shutdown_) return;
    shutdown_ = true;
  }
  ready_.notify_all();
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
}

}  // namespace flashps::http
