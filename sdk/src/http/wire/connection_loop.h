// The server's connections, on one event-driven thread (epoll): it accepts them, reads each
// request's head and body within that connection's budgets, and hands complete requests on
// (`on_request`, to a worker). While a worker serves one, the loop watches its socket for the
// client's close or reset, and marks the request's ClientPresence gone. Nothing a client sends
// holds a thread: a slow one costs its connection, until an absolute deadline for the head and
// one for the body (bytes trickling in never extend them) close it with 408.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "http/wire/message.h"
#include "http/wire/request_head.h"
#include "http/wire/wire_error.h"

namespace flashps::http {

struct TransportLimits {
  HeadLimits head;
  int64_t max_body_bytes = int64_t{64} << 20;
  double head_seconds = 10;  // from accepting the connection to the head's blank line
  // The body's deadline, from the end of its head: body_seconds plus its declared length (a
  // chunked body: the body limit) at body_min_bytes_per_second.
  double body_seconds = 10;
  double body_min_bytes_per_second = 1 << 20;
  int max_open_connections = 1000;       // past it: 503 and close at once
  int max_connections_per_client = 100;  // per remote address; past it: 429 and close at once
  double write_seconds = 30;             // one write waiting for the client to read
};

class ConnectionLoop;

// One complete request on its way to a worker; finish() after its answer was written (or
// abandoned) hands the connection back to the loop, which closes it.
class Exchange {
 public:
  Request request;
  int fd() const { return fd_; }
  void finish();
  ~Exchange();  // finishes if not done yet

 private:
  friend class ConnectionLoop;
  struct Mailbox;
  int fd_ = -1;
  uint64_t connection_id_ = 0;
  std::shared_ptr<Mailbox> mailbox_;
  bool finished_ = false;
};

class ConnectionLoop {
 public:
  struct Handlers {
    // On the loop thread, once a head is complete: an answer here refuses the request (it is
    // written, and the connection closed, without reading the body); nullopt reads on.
    std::function<std::optional<Response>(Request&)> on_head;
    // On the loop thread, for each complete request: hands it to a worker (nullopt), or refuses
    // it with an answer the loop writes.
    std::function<std::optional<Response>(std::shared_ptr<Exchange>)> on_request;
    // On the loop thread, for each answer the loop gives itself (refusals, wire errors).
    std::function<void(const Request&, const Response&)> on_answered;
    // An answer in the server's error shape for a wire error (431, 413, 408, ...).
    std::function<Response(const WireError&)> error_response;
  };

  // Takes `listen_fd` (bound and listening); starts the thread. `open_connections` counts the
  // connections open now (a gauge the server reports).
  ConnectionLoop(int listen_fd, TransportLimits limits, Handlers handlers, std::atomic<int>& open_connections);
  ~ConnectionLoop();
  ConnectionLoop(const ConnectionLoop&) = delete;
  ConnectionLoop& operator=(const ConnectionLoop&) = delete;

  // Stops accepting; marks every request being served as gone (their workers stop writing).
  void stop_accepting();
  // Closes every connection and joins the thread. Call after the workers stopped.
  void stop();

 private:
  struct Connection;
  void run();
  void accept_all();
  void on_readable(Connection& connection);
  void on_head_complete(Connection& connection);
  void read_body(Connection& connection, const char* data, size_t size);
  void dispatch(Connection& connection);
  void answer_and_close(Connection& connection, const Response& response);
  void linger(Connection& connection);
  void close_connection(uint64_t id);
  void expire_deadlines();
  void take_finished();

  const int listen_fd_;
  const TransportLimits limits_;
  const Handlers handlers_;
  int epoll_fd_ = -1, wake_fd_ = -1;
  std::atomic<int>& open_;
  std::atomic<bool> accepting_{true}, stopping_{false};
  std::shared_ptr<Exchange::Mailbox> mailbox_;
  struct State;
  std::unique_ptr<State> state_;  // connections by id, counts by address: loop thread only
  std::thread thread_;
};

}  // namespace flashps::http
