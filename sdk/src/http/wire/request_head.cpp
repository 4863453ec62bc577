#include "http/wire/request_head.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace flashps::http {
namespace {

// RFC 9110 token characters: method and field names.
bool is_token(const std::string& text) {
  if (text.empty()) return false;
  for (const char c : text)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || std::strchr("!#$%&'*+-.^_`|~", c) != nullptr)) return false;
  return true;
}

std::string trimmed(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

}  // namespace

size_t RequestHeadReader::feed(const char* data, size_t size) {
  size_t taken = 0;
  while (taken < size && state_ == State::reading) {
    const char* end = static_cast<const char*>(std::memchr(data + taken, '\n', size - taken));
    const size_t length = end ? static_cast<size_t>(end - (data + taken)) + 1 : size - taken;
    if (bytes_ + length > limits_.max_bytes) {
      fail(431, "the request head (request line and header fields) is over " + std::to_string(limits_.max_bytes) +
                    " bytes",
           "request_head_too_large");
      return taken;
    }
    bytes_ += length;
    line_.append(data + taken, end ? length - 1 : length);
    taken += length;
    if (!end) break;
    if (!line_.empty() && line_.back() == '\r') line_.pop_back();
    take_line(line_);
    line_.clear();
  }
  return taken;
}

void RequestHeadReader::take_line(std::string& line) {
  if (!have_request_line_) {
    if (line.empty()) return;  // blank lines before the request line are tolerated (RFC 9112 2.2)
    const size_t first = line.find(' '), second = first == std::string::npos ? first : line.find(' ', first + 1);
    if (second == std::string::npos || line.find(' ', second + 1) != std::string::npos)
      return fail(400, "malformed request line (expected METHOD TARGET HTTP/1.1)", "malformed_request");
    head_.method = line.substr(0, first);
    head_.target = line.substr(first + 1, second - first - 1);
    head_.version = line.substr(second + 1);
    if (!is_token(head_.method)) return fail(400, "malformed request method", "malformed_request");
    if (head_.target.empty() || head_.target[0] != '/') {
      if (head_.method != "OPTIONS" || head_.target != "*")
        return fail(400, "the request target must be a path starting with '/'", "malformed_request");
    }
    if (head_.version != "HTTP/1.1" && head_.version != "HTTP/1.0")
      return fail(505, "HTTP version '" + head_.version.substr(0, 16) + "' is not supported (HTTP/1.1 or 1.0)",
                  "http_version_not_supported");
    const size_t query = head_.target.find('?');
    head_.path = head_.target.substr(0, query);
    if (query != std::string::npos) head_.params = parse_query(head_.target.substr(query + 1));
    have_request_line_ = true;
    return;
  }
  if (line.empty()) {
    state_ = State::complete;
    return;
  }
  if (++fields_ > limits_.max_fields)
    return fail(431, "the request has more than " + std::to_string(limits_.max_fields) + " header fields",
                "too_many_header_fields");
  // Folded lines (obsolete) and spaces before the colon are refused: they are how requests get
  // read differently by two servers (RFC 9112 5.1, 5.2).
  if (line[0] == ' ' || line[0] == '\t') return fail(400, "folded header lines are not accepted", "malformed_request");
  const size_t colon = line.find(':');
  if (colon == std::string::npos || !is_token(line.substr(0, colon)))
    return fail(400, "malformed header field (expected 'Name: value')", "malformed_request");
  std::string value = trimmed(line.substr(colon + 1));
  for (const char c : value)
    if ((c >= 0 && c < 0x20 && c != '\t') || c == 0x7f)
      return fail(400, "a header field value holds a control character", "malformed_request");
  head_.headers.emplace(line.substr(0, colon), std::move(value));
}

void RequestHeadReader::fail(int status, std::string message, std::string code) {
  state_ = State::failed;
  error_ = {status, std::move(message), std::move(code)};
  line_.clear();
  line_.shrink_to_fit();
}

void RequestHeadReader::move_into(Request& request) {
  request.method = std::move(head_.method);
  request.target = std::move(head_.target);
  request.path = std::move(head_.path);
  request.version = std::move(head_.version);
  request.headers = std::move(head_.headers);
  request.params = std::move(head_.params);
}

}  // namespace flashps::http
