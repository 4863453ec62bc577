// Header flood: a request head that never ends, made of many small headers ("X-Flood-<n>: aaa...",
// about 80 bytes each; a single huge header is refused by any server, many small ones were not).
// Sent without the API key, at options.flood_mb_per_s per connection, up to options.flood_mb per
// connection; then the head is ended and the answer awaited. Each of options.flood_connections
// threads opens one flooding connection after another until stopped. Reported: how many MB each
// connection got through before the server answered or closed, and the answers.
#include <mutex>

#include "abusers.h"
#include "raw_socket.h"
#include "tally.h"

namespace abuse {

namespace {

struct FloodTally {
  std::mutex mutex;
  std::vector<double> mb_per_connection;
  std::map<std::string, int64_t> endings;  // how each connection ended
  void add(double mb, const std::string& ending) {
    std::lock_guard<std::mutex> lock(mutex);
    mb_per_connection.push_back(mb);
    ++endings[ending];
  }
};

// Lines of ~80 bytes, numbered so no two headers share a name.
std::string flood_chunk(int64_t* next_header, size_t size) {
  std::string chunk;
  chunk.reserve(size + 100);
  static const std::string value(64, 'a');
  while (chunk.size() < size) chunk += "X-Flood-" + std::to_string((*next_header)++) + ": " + value + "\r\n";
  return chunk;
}

std::string answer_name(int status) { return status > 0 ? "answered_" + std::to_string(status) : "closed_without_answer"; }

void flood_one_connection(const Options& options, const std::atomic<bool>& stop, FloodTally& tally) {
  const int fd = connect_loopback(options.abuser_address, options.port, 5);
  if (fd < 0) return tally.add(0, "connect_failed");
  size_t sent = 0;
  const double limit = options.flood_mb * 1048576.0;
  int64_t next_header = 0;
  std::string head = "GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  Sent result = send_bytes(fd, head.data(), head.size(), &sent);
  const auto started = Clock::now();
  std::string ending;
  while (result != Sent::closed && !stop.load()) {
    if (peer_spoke(fd)) {  // the server answered (or closed) in the middle of the head
      ending = answer_name(read_status(fd, 1));
      break;
    }
    if (double(sent) >= limit) {  // the bound: end the head, see what the server says
      const std::string end = "\r\n";
      send_bytes(fd, end.data(), end.size(), &sent);
      ending = "cap_sent_then_" + answer_name(read_status(fd, 10));
      break;
    }
    const std::string chunk = flood_chunk(&next_header, 64 * 1024);
    result = send_bytes(fd, chunk.data(), chunk.size(), &sent);
    // Rate: never ahead of options.flood_mb_per_s since this connection started.
    sleep_seconds(double(sent) / (options.flood_mb_per_s * 1048576.0) - seconds_since(started));
  }
  if (ending.empty()) ending = result == Sent::closed ? "closed_by_server_" + answer_name(read_status(fd, 0.5)) : "stopped";
  close_socket(fd);
  tally.add(double(sent) / 1048576.0, ending);
}

}  // namespace

json run_header_flood(const Options& options, const std::atomic<bool>& stop) {
  FloodTally tally;
  std::vector<std::thread> threads;
  for (int i = 0; i < options.flood_connections; ++i)
    threads.emplace_back([&] {
      while (!stop.load()) {
        flood_one_connection(options, stop, tally);
        sleep_unless(stop, 0.1);
      }
    });
  for (std::thread& thread : threads) thread.join();
  double total = 0;
  for (const double mb : tally.mb_per_connection) total += mb;
  return {{"connections", tally.mb_per_connection.size()},
          {"mb_sent", total},
          {"mb_per_connection", latency_summary(tally.mb_per_connection)},
          {"endings", tally.endings}};
}

}  // namespace abuse
