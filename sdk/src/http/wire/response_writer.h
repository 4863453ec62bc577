// Writing an answer on a connection: the status line and header fields, then the body whole or,
// for a streamed answer, chunk by chunk as its provider writes. Every answer closes its connection
// (one request per connection: nothing the client sends after a request is ever parsed). Each
// write waits for room at most `timeout_seconds`: a client that stops reading costs one worker
// for that long, then its answer is abandoned.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "http/wire/message.h"

namespace flashps::http {

class SocketWriter {
 public:
  SocketWriter(int fd, double timeout_seconds, std::shared_ptr<ClientPresence> presence)
      : fd_(fd), timeout_seconds_(timeout_seconds), presence_(std::move(presence)) {}
  // False (for good) once a write failed, timed out or the client is gone.
  bool write_all(const char* data, size_t size);
  bool ok() const { return ok_; }
  int64_t written() const { return written_; }

 private:
  const int fd_;
  const double timeout_seconds_;
  std::shared_ptr<ClientPresence> presence_;
  bool ok_ = true;
  int64_t written_ = 0;
};

// "HTTP/1.1 200 OK\r\n...\r\n\r\n" with Content-Length (or chunked) and Connection: close.
std::string response_head(const Response& response, bool chunked);

// Writes the answer; a HEAD request gets the head alone. Returns the body bytes written.
int64_t write_response(SocketWriter& writer, const Response& response, const std::string& method);

}  // namespace flashps::http
