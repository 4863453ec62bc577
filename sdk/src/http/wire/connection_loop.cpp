#include "http/wire/connection_loop.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <netinet/tcp.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <map>
#include <unordered_map>

#include "http/wire/body_framing.h"
#include "http/wire/chunked_body.h"
#include "http/wire/response_writer.h"

namespace flashps::http {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kListenId = 0, kWakeId = 1;
constexpr size_t kReadSize = 64 * 1024;
// After an answer, what the client still sends is read and dropped for this long (or this much),
// so closing does not reset the connection before the client has read the answer.
constexpr double kLingerSeconds = 1.0;
constexpr int64_t kLingerBytes = int64_t{8} << 20;

epoll_event event_for(uint32_t events, uint64_t id) {
  epoll_event event{};
  event.events = events;
  event.data.u64 = id;
  return event;
}

Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

std::string address_of(const sockaddr_storage& peer) {
  char text[INET6_ADDRSTRLEN] = "";
  if (peer.ss_family == AF_INET)
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(peer).sin_addr, text, sizeof text);
  else if (peer.ss_family == AF_INET6)
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr, text, sizeof text);
  return text;
}

// An answer in one nonblocking write: refusals are a few hundred bytes, which a fresh socket's
// send buffer always takes.
void write_now(int fd, const Response& response) {
  const std::string bytes = response_head(response, false) + response.body;
  [[maybe_unused]] const ssize_t sent = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

}  // namespace

struct Exchange::Mailbox {
  std::mutex mutex;
  std::vector<uint64_t> finished;
  int wake_fd = -1;
  bool closed = false;
};

void Exchange::finish() {
  if (finished_) return;
  finished_ = true;
  std::lock_guard<std::mutex> lock(mailbox_->mutex);
  if (mailbox_->closed) return;
  mailbox_->finished.push_back(connection_id_);
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t written = ::write(mailbox_->wake_fd, &one, sizeof one);
}

Exchange::~Exchange() { finish(); }

struct ConnectionLoop::Connection {
  enum class Phase { head, body, serving, lingering };
  uint64_t id = 0;
  int fd = -1;
  std::string address;
  bool counted_for_address = false;
  Phase phase = Phase::head;
  Clock::time_point deadline;
  RequestHeadReader head_reader;
  Request request;
  BodyFraming framing;
  std::unique_ptr<ChunkedBodyReader> chunked;
  int64_t lingered = 0;

  explicit Connection(const HeadLimits& limits) : head_reader(limits) {}
};

struct ConnectionLoop::State {
  std::unordered_map<uint64_t, std::unique_ptr<Connection>> connections;
  std::map<std::string, int> per_address;
  uint64_t next_id = 2;
};

ConnectionLoop::ConnectionLoop(int listen_fd, TransportLimits limits, Handlers handlers, std::atomic<int>& open_connections)
    : listen_fd_(listen_fd), limits_(limits), handlers_(std::move(handlers)), open_(open_connections),
      mailbox_(std::make_shared<Exchange::Mailbox>()), state_(std::make_unique<State>()) {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  mailbox_->wake_fd = wake_fd_;
  epoll_event listen_event = event_for(EPOLLIN, kListenId);
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &listen_event);
  epoll_event wake_event = event_for(EPOLLIN, kWakeId);
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &wake_event);
  thread_ = std::thread([this] { run(); });
}

ConnectionLoop::~ConnectionLoop() { stop(); }

void ConnectionLoop::stop_accepting() {
  accepting_ = false;
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t written = ::write(wake_fd_, &one, sizeof one);
}

void ConnectionLoop::stop() {
  if (!thread_.joinable()) return;
  stopping_ = true;
  stop_accepting();
  thread_.join();
  {
    std::lock_guard<std::mutex> lock(mailbox_->mutex);
    mailbox_->closed = true;
  }
  std::vector<uint64_t> ids;
  for (const auto& [id, connection] : state_->connections) ids.push_back(id);
  for (const uint64_t id : ids) close_connection(id);
  ::close(epoll_fd_);
  ::close(wake_fd_);
  ::close(listen_fd_);
}

void ConnectionLoop::run() {
  epoll_event events[256];
  Clock::time_point last_scan;
  while (!stopping_) {
    if (!accepting_) {
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
      // A server closing: the requests being served learn their client is gone, so event
      // streams and waits end at once.
      for (const auto& [id, connection] : state_->connections)
        if (connection->phase == Connection::Phase::serving) connection->request.presence->mark_gone();
    }
    const int count = ::epoll_wait(epoll_fd_, events, 256, 25);
    for (int i = 0; i < count; ++i) {
      const uint64_t id = events[i].data.u64;
      if (id == kListenId) {
        if (accepting_) accept_all();
        continue;
      }
      if (id == kWakeId) {
        uint64_t value;
        [[maybe_unused]] const ssize_t read = ::read(wake_fd_, &value, sizeof value);
        take_finished();
        continue;
      }
      const auto found = state_->connections.find(id);
      if (found == state_->connections.end()) continue;
      Connection& connection = *found->second;
      if (connection.phase == Connection::Phase::serving) {
        // EPOLLRDHUP or a reset while a worker serves it: the client went away.
        connection.request.presence->mark_gone();
        continue;  // one-shot: not reported again; the worker's finish() closes it
      }
      on_readable(connection);
    }
    // A scan of every connection: at most every 25 ms, however busy the loop is.
    if (Clock::now() - last_scan >= std::chrono::milliseconds(25)) {
      expire_deadlines();
      last_scan = Clock::now();
    }
  }
}

void ConnectionLoop::accept_all() {
  for (;;) {
    sockaddr_storage peer{};
    socklen_t length = sizeof peer;
    const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // EAGAIN, or out of descriptors (EMFILE): the rest wait in the backlog
    }
    int yes = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    const std::string address = address_of(peer);
    std::optional<WireError> refusal;
    if (open_.load() >= limits_.max_open_connections)
      refusal = WireError{503, "too many connections (at most " + std::to_string(limits_.max_open_connections) +
                                   " open); retry later", "too_many_connections"};
    else if (state_->per_address[address] >= limits_.max_connections_per_client)
      refusal = WireError{429, "too many connections from " + address + " (at most " +
                                   std::to_string(limits_.max_connections_per_client) + " open); retry later",
                          "too_many_connections_from_client"};
    if (refusal) {
      Request request;
      request.remote_addr = address;
      const Response response = handlers_.error_response(*refusal);
      write_now(fd, response);
      ::shutdown(fd, SHUT_WR);
      ::close(fd);
      handlers_.on_answered(request, response);
      continue;
    }
    auto connection = std::make_unique<Connection>(limits_.head);
    connection->id = state_->next_id++;
    connection->fd = fd;
    connection->address = address;
    connection->counted_for_address = true;
    ++state_->per_address[address];
    connection->request.remote_addr = address;
    connection->request.accepted_at = Clock::now();
    connection->deadline = after(limits_.head_seconds);
    epoll_event event = event_for(EPOLLIN | EPOLLRDHUP, connection->id);
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event);
    ++open_;
    state_->connections.emplace(connection->id, std::move(connection));
  }
}

void ConnectionLoop::on_readable(Connection& connection) {
  char buffer[kReadSize];
  const ssize_t got = ::recv(connection.fd, buffer, sizeof buffer, 0);
  if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  if (got <= 0) {  // the client closed or reset: nothing to answer
    close_connection(connection.id);
    return;
  }
  const size_t size = static_cast<size_t>(got);
  if (connection.phase == Connection::Phase::lingering) {
    connection.lingered += got;
    if (connection.lingered > kLingerBytes) close_connection(connection.id);
    return;
  }
  if (connection.phase == Connection::Phase::body) {
    read_body(connection, buffer, size);
    return;
  }
  const size_t taken = connection.head_reader.feed(buffer, size);
  switch (connection.head_reader.state()) {
    case RequestHeadReader::State::reading: return;
    case RequestHeadReader::State::failed:
      answer_and_close(connection, handlers_.error_response(connection.head_reader.error()));
      return;
    case RequestHeadReader::State::complete:
      on_head_complete(connection);
      if (connection.phase == Connection::Phase::body) read_body(connection, buffer + taken, size - taken);
      return;
  }
}

void ConnectionLoop::on_head_complete(Connection& connection) {
  Request& request = connection.request;
  connection.head_reader.move_into(request);
  request.head_read_at = Clock::now();
  if (auto refusal = handlers_.on_head(request)) {
    answer_and_close(connection, *refusal);
    return;
  }
  if (const auto error = frame_body(request, limits_.max_body_bytes, connection.framing)) {
    answer_and_close(connection, handlers_.error_response(*error));
    return;
  }
  if (connection.framing.kind == BodyFraming::Kind::none) {
    dispatch(connection);
    return;
  }
  const double declared = connection.framing.kind == BodyFraming::Kind::length
                              ? static_cast<double>(connection.framing.length)
                              : static_cast<double>(limits_.max_body_bytes);
  connection.deadline = after(limits_.body_seconds + declared / limits_.body_min_bytes_per_second);
  if (connection.framing.kind == BodyFraming::Kind::chunked)
    connection.chunked = std::make_unique<ChunkedBodyReader>(limits_.max_body_bytes);
  else
    request.body.reserve(std::min<uint64_t>(connection.framing.length, 1 << 20));  // grows as bytes come
  connection.phase = Connection::Phase::body;
  if (::strcasecmp(request.get_header_value("Expect").c_str(), "100-continue") == 0) {
    static constexpr char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
    [[maybe_unused]] const ssize_t sent = ::send(connection.fd, kContinue, sizeof kContinue - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
  }
}

void ConnectionLoop::read_body(Connection& connection, const char* data, size_t size) {
  Request& request = connection.request;
  if (connection.chunked) {
    connection.chunked->feed(data, size, request.body);
    if (connection.chunked->state() == ChunkedBodyReader::State::failed) {
      request.body.clear();
      request.body.shrink_to_fit();
      answer_and_close(connection, handlers_.error_response(connection.chunked->error()));
      return;
    }
    if (connection.chunked->state() == ChunkedBodyReader::State::complete) dispatch(connection);
    return;
  }
  const size_t wanted = static_cast<size_t>(connection.framing.length - request.body.size());
  request.body.append(data, std::min(size, wanted));  // bytes past the body are never parsed
  if (request.body.size() == connection.framing.length) dispatch(connection);
}

void ConnectionLoop::dispatch(Connection& connection) {
  connection.phase = Connection::Phase::serving;
  connection.request.body_read_at = Clock::now();
  // Only the peer's close or reset is watched now, once: EPOLLIN would report every further byte.
  // A client that closed its sending side right after its request (printf ... | nc -N) still
  // reads the answer: then only a reset (EPOLLHUP/EPOLLERR, always reported) counts as gone.
  char peek;
  const bool half_closed = ::recv(connection.fd, &peek, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
  epoll_event event = event_for((half_closed ? 0u : static_cast<uint32_t>(EPOLLRDHUP)) | EPOLLONESHOT, connection.id);
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, connection.fd, &event);
  auto exchange = std::make_shared<Exchange>();
  exchange->fd_ = connection.fd;
  exchange->connection_id_ = connection.id;
  exchange->mailbox_ = mailbox_;
  exchange->request = connection.request;  // the connection keeps the head and the presence
  exchange->request.body = std::move(connection.request.body);
  connection.request.body = std::string();
  if (auto refusal = handlers_.on_request(exchange)) {
    exchange->finished_ = true;  // answered here, not by a worker
    epoll_event watch = event_for(EPOLLIN | EPOLLRDHUP, connection.id);
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, connection.fd, &watch);
    answer_and_close(connection, *refusal);
  }
}

void ConnectionLoop::answer_and_close(Connection& connection, const Response& response) {
  write_now(connection.fd, response);
  handlers_.on_answered(connection.request, response);
  linger(connection);
}

void ConnectionLoop::linger(Connection& connection) {
  connection.phase = Connection::Phase::lingering;
  connection.chunked.reset();
  connection.request.body = std::string();
  ::shutdown(connection.fd, SHUT_WR);
  epoll_event event = event_for(EPOLLIN | EPOLLRDHUP, connection.id);
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, connection.fd, &event);
  connection.deadline = after(kLingerSeconds);
}

void ConnectionLoop::close_connection(uint64_t id) {
  const auto found = state_->connections.find(id);
  if (found == state_->connections.end()) return;
  Connection& connection = *found->second;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, connection.fd, nullptr);
  ::close(connection.fd);
  if (connection.counted_for_address) {
    const auto count = state_->per_address.find(connection.address);
    if (count != state_->per_address.end() && --count->second <= 0) state_->per_address.erase(count);
  }
  --open_;
  state_->connections.erase(found);
}

void ConnectionLoop::expire_deadlines() {
  const auto now = Clock::now();
  std::vector<uint64_t> expired;
  for (const auto& [id, connection] : state_->connections)
    if (connection->phase != Connection::Phase::serving && connection->deadline <= now) expired.push_back(id);
  for (const uint64_t id : expired) {
    Connection& connection = *state_->connections.at(id);
    if (connection.phase == Connection::Phase::lingering) {
      close_connection(id);
    } else if (connection.phase == Connection::Phase::head && connection.head_reader.state() == RequestHeadReader::State::reading &&
               connection.request.method.empty() && !connection.head_reader.started()) {
      close_connection(id);  // an idle connection that never sent a byte: nothing to answer
    } else {
      const bool head = connection.phase == Connection::Phase::head;
      answer_and_close(connection, handlers_.error_response(
                                       {408,
                                        head ? "the request head did not arrive within " +
                                                   std::to_string(static_cast<int>(limits_.head_seconds)) + " s"
                                             : "the request body did not arrive within its deadline",
                                        "request_timeout"}));
    }
  }
}

void ConnectionLoop::take_finished() {
  std::vector<uint64_t> finished;
  {
    std::lock_guard<std::mutex> lock(mailbox_->mutex);
    finished.swap(mailbox_->finished);
  }
  for (const uint64_t id : finished) {
    const auto found = state_->connections.find(id);
    if (found != state_->connections.end()) linger(*found->second);
  }
}

}  // namespace flashps::http
