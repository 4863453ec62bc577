#include "http/wire/body_framing.h"

#include <strings.h>

namespace flashps::http {

WireError body_too_large(int64_t max_body_bytes) {
  return {413,
          "the request body is larger than this server takes (" + std::to_string(max_body_bytes) +
              " bytes, --max-body-mb)",
          "body_too_large"};
}

std::optional<WireError> frame_body(const Request& head, int64_t max_body_bytes, BodyFraming& framing) {
  framing = {};
  const auto lengths = head.headers.equal_range("Content-Length");
  const auto encodings = head.headers.equal_range("Transfer-Encoding");
  const bool has_length = lengths.first != lengths.second, has_encoding = encodings.first != encodings.second;
  if (has_length && has_encoding)
    return WireError{400, "a request must not have both Content-Length and Transfer-Encoding", "malformed_request"};
  const std::string content_encoding = head.get_header_value("Content-Encoding");
  if (!content_encoding.empty() && ::strcasecmp(content_encoding.c_str(), "identity") != 0)
    return WireError{415,
                     "compressed request bodies (Content-Encoding: " + content_encoding.substr(0, 40) +
                         ") are not taken; send it uncompressed",
                     "unsupported_content_encoding"};
  if (has_encoding) {
    if (std::next(encodings.first) != encodings.second || ::strcasecmp(encodings.first->second.c_str(), "chunked") != 0)
      return WireError{501,
                       "Transfer-Encoding '" + encodings.first->second.substr(0, 40) +
                           "' is not supported (chunked only)",
                       "unsupported_transfer_encoding"};
    framing.kind = BodyFraming::Kind::chunked;
    return std::nullopt;
  }
  if (has_length) {
    if (std::next(lengths.first) != lengths.second)
      return WireError{400, "a request must not have several Content-Length fields", "malformed_request"};
    const std::string& text = lengths.first->second;
    if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos)
      return WireError{400, "Content-Length must be a decimal number, not '" + text.substr(0, 40) + "'",
                       "malformed_request"};
    framing.length = std::stoull(text);
    if (framing.length > static_cast<uint64_t>(max_body_bytes)) return body_too_large(max_body_bytes);
    framing.kind = framing.length > 0 ? BodyFraming::Kind::length : BodyFraming::Kind::none;
    return std::nullopt;
  }
  if (head.method == "POST" || head.method == "PUT" || head.method == "PATCH")
    return WireError{411, "a " + head.method + " needs a Content-Length (or a chunked body)", "length_required"};
  return std::nullopt;
}

}  // namespace flashps::http
