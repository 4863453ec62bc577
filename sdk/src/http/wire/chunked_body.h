// Decodes a chunked request body (RFC 9112 7.1) as it arrives, counting what it keeps: past
// `max_bytes` of data it fails with 413 at once, whatever the chunk sizes announced. Chunk
// extensions are skipped, trailer fields read and dropped (both within small budgets).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "http/wire/wire_error.h"

namespace flashps::http {

class ChunkedBodyReader {
 public:
  enum class State { reading, complete, failed };

  explicit ChunkedBodyReader(int64_t max_bytes) : max_bytes_(max_bytes) {}
  // Appends the decoded data to `body`; returns how many input bytes it took (it stops at the end
  // of the body or at an error).
  size_t feed(const char* data, size_t size, std::string& body);
  State state() const { return state_; }
  const WireError& error() const { return error_; }

 private:
  enum class Part { size_line, data, data_end, trailer };
  bool end_line(const std::string& line);  // a size or trailer line is complete
  void fail(int status, std::string message, std::string code);

  const int64_t max_bytes_;
  State state_ = State::reading;
  Part part_ = Part::size_line;
  WireError error_;
  std::string line_;
  uint64_t chunk_left_ = 0, received_ = 0;
  size_t trailer_bytes_ = 0;
};

}  // namespace flashps::http
