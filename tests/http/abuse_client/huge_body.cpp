// Declared huge body: a POST without the key declaring options.huge_body_gib GiB of body, then
// zeros at options.huge_body_mb_per_s, at most options.huge_body_mb per connection. A server that
// reads bodies only up to its limit answers 413 (or 401) and closes early; one that reads it all
// keeps taking bytes. One connection at a time until stopped. Reported: MB each connection got
// through before the server answered or closed, and the answers.
#include "abusers.h"
#include "raw_socket.h"
#include "tally.h"

namespace abuse {

json run_huge_body(const Options& options, const std::atomic<bool>& stop) {
  std::vector<double> mb_per_connection;
  std::map<std::string, int64_t> endings;
  const std::string zeros(256 * 1024, '0');
  const auto declared = uint64_t(options.huge_body_gib * 1073741824.0);
  const double limit = options.huge_body_mb * 1048576.0;
  while (!stop.load()) {
    const int fd = connect_loopback(options.abuser_address, options.port, 5);
    if (fd < 0) {
      ++endings["connect_failed"];
      sleep_unless(stop, 0.5);
      continue;
    }
    const std::string head = "POST /v1/edits HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
                             std::to_string(declared) + "\r\n\r\n";
    size_t sent = 0, body = 0;
    Sent result = send_bytes(fd, head.data(), head.size(), &sent);
    const auto started = Clock::now();
    std::string ending;
    while (result != Sent::closed && !stop.load()) {
      if (peer_spoke(fd)) {
        const int status = read_status(fd, 1);
        ending = status > 0 ? "answered_" + std::to_string(status) : "closed_without_answer";
        break;
      }
      if (double(body) >= limit) {
        ending = "cap_sent";
        break;
      }
      result = send_bytes(fd, zeros.data(), zeros.size(), &body);
      sleep_seconds(double(body) / (options.huge_body_mb_per_s * 1048576.0) - seconds_since(started));
    }
    if (ending.empty()) ending = result == Sent::closed ? "closed_by_server" : "stopped";
    close_socket(fd, /*reset=*/true);
    mb_per_connection.push_back(double(body) / 1048576.0);
    ++endings[ending];
    sleep_unless(stop, 0.1);
  }
  double total = 0;
  for (const double mb : mb_per_connection) total += mb;
  return {{"connections", mb_per_connection.size()},
          {"declared_gib", options.huge_body_gib},
          {"mb_sent", total},
          {"mb_per_connection", latency_summary(mb_per_connection)},
          {"endings", endings}};
}

}  // namespace abuse
