// A raw loopback connection for HTTP tests: what a client sends, byte for byte, and a close at the
// moment the test chooses (a client that goes away mid-request).
#pragma once
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <tuple>
#include <vector>

namespace flashps::test {

struct RawConnection {
  int fd = -1;
  explicit RawConnection(int port) {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    ::inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  }
  ~RawConnection() { close(); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;
  void close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  bool send_all(const std::string& bytes) {
    size_t at = 0;
    while (at < bytes.size()) {
      const ssize_t sent = ::send(fd, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
      if (sent <= 0) return false;
      at += static_cast<size_t>(sent);
    }
    return true;
  }
  // True when the server has answered (or closed) without blocking.
  bool answered() const {
    pollfd readable{fd, POLLIN, 0};
    return ::poll(&readable, 1, 0) > 0;
  }
  // What arrives until the server closes, or `seconds` pass; `closed` tells which.
  std::string read_until_closed(double seconds, bool* closed = nullptr) {
    using Clock = std::chrono::steady_clock;
    std::string text;
    const auto start = Clock::now();
    if (closed) *closed = false;
    while (std::chrono::duration<double>(Clock::now() - start).count() < seconds) {
      pollfd readable{fd, POLLIN, 0};
      if (::poll(&readable, 1, 50) <= 0) continue;
      char buffer[65536];
      const ssize_t got = ::recv(fd, buffer, sizeof buffer, 0);
      if (got <= 0) {
        if (closed) *closed = true;
        break;
      }
      text.append(buffer, static_cast<size_t>(got));
    }
    return text;
  }
};

// A whole POST of a multipart form: (name, value, filename) per field; filename "" for text.
inline std::string multipart_post(const std::string& path,
                                  const std::vector<std::tuple<std::string, std::string, std::string>>& fields) {
  const std::string boundary = "raw-connection-boundary";
  std::string body;
  for (const auto& [name, value, filename] : fields)
    body += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + name + "\"" +
            (filename.empty() ? "" : "; filename=\"" + filename + "\"") + "\r\n\r\n" + value + "\r\n";
  body += "--" + boundary + "--\r\n";
  return "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=" + boundary +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

}  // namespace flashps::test
