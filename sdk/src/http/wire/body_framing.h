// How a request's body is delimited, decided from its head before a byte of it is read: a
// Content-Length (refused at once, 413, when over the server's limit), chunked (counted as it
// arrives), or none. Bodies the server cannot bound are refused: a POST without either (411:
// it would run until the client closes), a compressed body (415: a few KB can inflate to GBs),
// and the ambiguous framings requests are smuggled with (both headers, several lengths: 400).
#pragma once
#include <cstdint>
#include <optional>

#include "http/wire/message.h"
#include "http/wire/wire_error.h"

namespace flashps::http {

struct BodyFraming {
  enum class Kind { none, length, chunked } kind = Kind::none;
  uint64_t length = 0;  // Kind::length
};

// The framing, or the refusal (411, 413, 415, 400, 501).
std::optional<WireError> frame_body(const Request& head, int64_t max_body_bytes, BodyFraming& framing);

// The 413 message, shared by a declared length and a chunked body that grows past the limit.
WireError body_too_large(int64_t max_body_bytes);

}  // namespace flashps::http
