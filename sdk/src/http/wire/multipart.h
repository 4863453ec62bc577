// Reads a multipart/form-data body (RFC 7578) into its parts, within limits that each name
// themselves in the refusal: the number of parts, and the size of one part's header fields. The
// body itself is already bounded by the server's body limit. Duplicate names are kept (in order):
// which fields may repeat is the form's rule (edit_form.cpp), not the wire's.
#pragma once
#include <cstddef>
#include <optional>
#include <string>

#include "http/wire/message.h"
#include "http/wire/wire_error.h"

namespace flashps::http {

struct MultipartLimits {
  int max_parts = 32;
  size_t max_part_head_bytes = 8192;
};

// Fills `parts` from `body`; the boundary comes from `content_type`. A refusal is 400 naming the
// limit or the malformed part.
std::optional<WireError> parse_multipart(const std::string& content_type, const std::string& body,
                                         const MultipartLimits& limits, MultipartFormDataMap& parts);

}  // namespace flashps::http
