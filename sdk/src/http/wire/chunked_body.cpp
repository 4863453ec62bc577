#include "http/wire/chunked_body.h"

#include <algorithm>

#include "http/wire/body_framing.h"

namespace flashps::http {
namespace {

constexpr size_t kMaxSizeLine = 1024;      // hex digits and extensions
constexpr size_t kMaxTrailerBytes = 8192;  // all trailer fields together

}  // namespace

size_t ChunkedBodyReader::feed(const char* data, size_t size, std::string& body) {
  size_t taken = 0;
  while (taken < size && state_ == State::reading) {
    if (part_ == Part::data) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk_left_, size - taken));
      body.append(data + taken, n);
      taken += n;
      chunk_left_ -= n;
      received_ += n;
      if (chunk_left_ == 0) part_ = Part::data_end;
      continue;
    }
    const char c = data[taken++];
    if (c != '\n') {
      line_ += c;
      const size_t budget = part_ == Part::trailer ? kMaxTrailerBytes - trailer_bytes_ : kMaxSizeLine;
      if (line_.size() > budget) {
        if (part_ == Part::trailer) fail(431, "the chunked body's trailer fields are over 8192 bytes", "request_head_too_large");
        else fail(400, "a chunk size line is over 1024 bytes", "malformed_chunked_body");
      }
      continue;
    }
    if (!line_.empty() && line_.back() == '\r') line_.pop_back();
    if (!end_line(line_)) break;
    line_.clear();
  }
  return taken;
}

bool ChunkedBodyReader::end_line(const std::string& line) {
  switch (part_) {
    case Part::size_line: {
      const size_t digits = std::min(line.find_first_not_of("0123456789abcdefABCDEF"), line.size());
      const std::string rest = line.substr(digits);
      const size_t after = rest.find_first_not_of(" \t");  // then nothing, or ";extension"
      if (digits == 0 || digits > 15 || (after != std::string::npos && rest[after] != ';')) {
        fail(400, "malformed chunk size line", "malformed_chunked_body");
        return false;
      }
      chunk_left_ = std::stoull(line.substr(0, digits), nullptr, 16);
      if (static_cast<int64_t>(chunk_left_) > max_bytes_ - static_cast<int64_t>(received_)) {
        const WireError error = body_too_large(max_bytes_);
        fail(error.status, error.message, error.code);
        return false;
      }
      part_ = chunk_left_ == 0 ? Part::trailer : Part::data;
      return true;
    }
    case Part::data_end:
      if (!line.empty()) {
        fail(400, "a chunk's data is longer than its size", "malformed_chunked_body");
        return false;
      }
      part_ = Part::size_line;
      return true;
    case Part::trailer:
      if (line.empty()) {
        state_ = State::complete;
        return false;
      }
      trailer_bytes_ += line.size() + 2;
      return true;
    case Part::data: break;
  }
  return true;
}

void ChunkedBodyReader::fail(int status, std::string message, std::string code) {
  state_ = State::failed;
  error_ = {status, std::move(message), std::move(code)};
}

}  // namespace flashps::http
