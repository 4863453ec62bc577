#include "http/wire/response_writer.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>

namespace flashps::http {

bool SocketWriter::write_all(const char* data, size_t size) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds_);
  while (ok_ && size > 0) {
    if (presence_ && presence_->gone()) ok_ = false;
    if (!ok_) break;
    const ssize_t sent = ::send(fd_, data, size, MSG_NOSIGNAL);
    if (sent > 0) {
      data += sent;
      size -= static_cast<size_t>(sent);
      written_ += sent;
      continue;
    }
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        ok_ = false;
        break;
      }
      pollfd room{fd_, POLLOUT, 0};
      // In slices, so a client gone while its answer waits for room is noticed.
      ::poll(&room, 1, static_cast<int>(std::min<int64_t>(left.count(), 200)));
      continue;
    }
    ok_ = false;
  }
  return ok_;
}

std::string response_head(const Response& response, bool chunked) {
  std::string head = "HTTP/1.1 " + std::to_string(response.status) + " " + status_reason(response.status) + "\r\n";
  for (const auto& [name, value] : response.headers) {
    if (name.find_first_of("\r\n") != std::string::npos || value.find_first_of("\r\n") != std::string::npos) continue;
    head += name + ": " + value + "\r\n";
  }
  head += chunked ? "Transfer-Encoding: chunked\r\n" : "Content-Length: " + std::to_string(response.body.size()) + "\r\n";
  head += "Connection: close\r\n\r\n";
  return head;
}

int64_t write_response(SocketWriter& writer, const Response& response, const std::string& method) {
  const bool chunked = static_cast<bool>(response.content_provider);
  const std::string head = response_head(response, chunked);
  const auto release = [&](bool success) {
    if (chunked && response.content_provider_releaser) response.content_provider_releaser(success);
  };
  if (!writer.write_all(head.data(), head.size()) || method == "HEAD") {
    release(method == "HEAD" && writer.ok());
    return 0;
  }
  if (!chunked) {
    writer.write_all(response.body.data(), response.body.size());
    return writer.written() - static_cast<int64_t>(head.size());
  }
  bool done = false;
  size_t offset = 0;
  DataSink sink;
  sink.write = [&](const char* data, size_t size) {
    if (size == 0) return writer.ok();
    char size_line[24];
    const int length = std::snprintf(size_line, sizeof size_line, "%zx\r\n", size);
    const bool written = writer.write_all(size_line, static_cast<size_t>(length)) && writer.write_all(data, size) &&
                         writer.write_all("\r\n", 2);
    if (written) offset += size;
    return written;
  };
  sink.done = [&] { done = true; };
  sink.is_writable = [&] { return writer.ok(); };
  ContentProvider provider = response.content_provider;
  while (!done && writer.ok()) {
    if (!provider(offset, sink)) break;
  }
  if (done) writer.write_all("0\r\n\r\n", 5);
  release(done && writer.ok());
  return static_cast<int64_t>(offset);
}

}  // namespace flashps::http
