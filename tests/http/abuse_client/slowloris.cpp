// Slowloris: options.slowloris_connections connections, each sending one byte of a request head
// every options.slowloris_interval seconds and never finishing it (an idle timeout that each byte
// restarts never fires). A connection the server closes or answers is reopened at the next tick, as
// an attacker would. One thread drives them all. Reported: connections opened, how they ended, how
// long the server let them live, and how many were open on average.
#include <deque>

#include "abusers.h"
#include "raw_socket.h"
#include "tally.h"

namespace abuse {

namespace {

struct SlowConnection {
  int fd = -1;
  size_t next = 0;  // index into the head being dripped
  Clock::time_point opened;
};

// A head that is never finished: after the request line, one endless header value.
char drip(size_t index) {
  static const std::string start = "GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
  return index < start.size() ? start[index] : 'a';
}

}  // namespace

json run_slowloris(const Options& options, const std::atomic<bool>& stop) {
  std::vector<SlowConnection> connections(size_t(std::max(0, options.slowloris_connections)));
  std::map<std::string, int64_t> endings;
  std::vector<double> lifetimes;  // of the connections the server ended
  int64_t opened = 0, open_samples = 0, ticks = 0;
  while (!stop.load()) {
    const auto tick = Clock::now();
    int64_t open = 0;
    for (SlowConnection& connection : connections) {
      if (stop.load()) break;
      if (connection.fd < 0) {
        connection.fd = connect_loopback(options.abuser_address, options.port, 1);
        if (connection.fd < 0) {
          ++endings["connect_failed"];
          continue;
        }
        connection.next = 0;
        connection.opened = Clock::now();
        ++opened;
      }
      std::string ending;
      if (peer_spoke(connection.fd)) {
        const int status = read_status(connection.fd, 0.1);
        ending = status > 0 ? "answered_" + std::to_string(status) : "closed_by_server";
      } else {
        const char byte = drip(connection.next++);
        size_t sent = 0;
        if (send_bytes(connection.fd, &byte, 1, &sent) == Sent::closed) ending = "closed_by_server";
      }
      if (ending.empty()) {
        ++open;
        continue;
      }
      ++endings[ending];
      lifetimes.push_back(seconds_since(connection.opened));
      close_socket(connection.fd);
      connection.fd = -1;
    }
    open_samples += open;
    ++ticks;
    sleep_unless(stop, options.slowloris_interval - seconds_since(tick));
  }
  for (SlowConnection& connection : connections)
    if (connection.fd >= 0) close_socket(connection.fd);
  return {{"connections", connections.size()},
          {"opened", opened},
          {"endings", endings},
          {"ended_lifetime_s", latency_summary(lifetimes)},
          {"mean_open", ticks ? double(open_samples) / double(ticks) : 0.0}};
}

}  // namespace abuse
