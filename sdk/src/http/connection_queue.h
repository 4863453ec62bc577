// The server's connection threads, with a cap on connections served at once. cpp-httplib hands
// every accepted connection to a TaskQueue; this one runs up to `threads` of them on a pool and
// counts them. A connection over `max_connections` runs on a separate rejecting thread instead,
// flagged so the server answers it 503 at once and closes it: a flood gets a fast, bounded answer
// rather than an unbounded wait behind long edits and event streams.
#pragma once
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <type_traits>
#include <utility>
#include <thread>
#include <vector>

namespace flashps::http {

// cpp-httplib 0.11 (Debian 12) declares `void enqueue(fn)`, 0.18 (Debian 13) `bool enqueue(fn)`
// (false: the queue refused, httplib closes the socket): take whichever this httplib declares.
using TaskQueueEnqueueResult = decltype(std::declval<httplib::TaskQueue&>().enqueue(std::function<void()>{}));

class ConnectionQueue : public httplib::TaskQueue {
 public:
  ConnectionQueue(int threads, int max_connections, std::atomic<int>& open_connections);
  ~ConnectionQueue() override;

  // Never refuses: connections over the cap are answered 503 by a rejecting thread.
  TaskQueueEnqueueResult enqueue(std::function<void()> connection) override;
  void shutdown() override;

  // True on the thread answering a connection over the cap.
  static bool over_capacity();
  // On a connection thread: when the listener handed it the current connection, and when this
  // thread took it up (the difference is the connection's wait for a free thread).
  static std::chrono::steady_clock::time_point connection_accepted_at();
  static std::chrono::steady_clock::time_point connection_taken_at();

 private:
  void serve_loop(bool rejecting);

  const int max_connections_;
  std::atomic<int>& open_;
  std::mutex mutex_;
  std::condition_variable ready_;
  struct Connection {
    std::function<void()> serve;
    std::chrono::steady_clock::time_point accepted_at;
  };
  std::deque<Connection> accepted_, rejected_;
  bool shutdown_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace flashps::http
