// Reads a request line and header fields as they arrive, within a byte budget and a field count:
// nothing is kept beyond the budget, so a client sending endless small headers costs at most
// `max_bytes` before it is refused (431). Bytes after the blank line belong to the body and are
// left to the caller.
#pragma once
#include <cstddef>
#include <string>

#include "http/wire/message.h"
#include "http/wire/wire_error.h"

namespace flashps::http {

struct HeadLimits {
  size_t max_bytes = 64 * 1024;  // request line, fields and line ends together
  int max_fields = 100;
};

class RequestHeadReader {
 public:
  enum class State { reading, complete, failed };

  explicit RequestHeadReader(HeadLimits limits) : limits_(limits) {}
  // Takes bytes until the head is complete or refused; returns how many it took.
  size_t feed(const char* data, size_t size);
  State state() const { return state_; }
  const WireError& error() const { return error_; }  // failed
  bool started() const { return bytes_ > 0; }
  // complete: method, target, path, version and headers filled in.
  void move_into(Request& request);

 private:
  void take_line(std::string& line);
  void fail(int status, std::string message, std::string code);

  const HeadLimits limits_;
  State state_ = State::reading;
  WireError error_;
  size_t bytes_ = 0;
  int fields_ = 0;
  bool have_request_line_ = false;
  std::string line_;
  Request head_;
};

}  // namespace flashps::http
