#include "http/wire/multipart.h"

#include <strings.h>

#include <cctype>

namespace flashps::http {
namespace {

// The value of `name` in "type; a=1; name=\"v\"" (quoted or not), or nullopt.
std::optional<std::string> parameter(const std::string& header, const std::string& name) {
  size_t at = header.find(';');
  while (at != std::string::npos) {
    at = header.find_first_not_of(" \t", at + 1);
    if (at == std::string::npos) break;
    const size_t equals = header.find('=', at);
    if (equals == std::string::npos) break;
    std::string key = header.substr(at, equals - at);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
    std::string value;
    size_t next = equals + 1;
    if (next < header.size() && header[next] == '"') {
      for (++next; next < header.size() && header[next] != '"'; ++next) {
        if (header[next] == '\\' && next + 1 < header.size()) ++next;
        value += header[next];
      }
      next = header.find(';', next);
    } else {
      next = header.find(';', equals);
      value = header.substr(equals + 1, next == std::string::npos ? std::string::npos : next - equals - 1);
      while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.pop_back();
    }
    if (::strcasecmp(key.c_str(), name.c_str()) == 0) return value;
    at = next;
  }
  return std::nullopt;
}

WireError malformed(const std::string& what) { return {400, "malformed multipart/form-data body: " + what, "malformed_form"}; }

// One part's header fields (the lines before its blank line) into `part`.
std::optional<WireError> read_part_head(const std::string& head, MultipartFormData& part) {
  bool has_disposition = false;
  size_t start = 0;
  while (start < head.size()) {
    size_t end = head.find("\r\n", start);
    if (end == std::string::npos) end = head.size();
    const std::string line = head.substr(start, end - start);
    start = end + 2;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) return malformed("a part's header line has no ':'");
    const std::string name = line.substr(0, colon);
    const std::string value = line.substr(line.find_first_not_of(" \t", colon + 1) == std::string::npos
                                              ? line.size()
                                              : line.find_first_not_of(" \t", colon + 1));
    if (::strcasecmp(name.c_str(), "Content-Disposition") == 0) {
      if (::strncasecmp(value.c_str(), "form-data", 9) != 0) return malformed("a part is not form-data");
      const auto field = parameter(value, "name");
      if (!field || field->empty()) return malformed("a part has no name");
      part.name = *field;
      part.filename = parameter(value, "filename").value_or("");
      has_disposition = true;
    } else if (::strcasecmp(name.c_str(), "Content-Type") == 0) {
      part.content_type = value;
    }
  }
  if (!has_disposition) return malformed("a part has no Content-Disposition");
  return std::nullopt;
}

}  // namespace

std::optional<WireError> parse_multipart(const std::string& content_type, const std::string& body,
                                         const MultipartLimits& limits, MultipartFormDataMap& parts) {
  const auto boundary = parameter(content_type, "boundary");
  if (!boundary || boundary->empty() || boundary->size() > 200)
    return WireError{400, "multipart/form-data needs a boundary parameter (1 to 200 characters)", "malformed_form"};
  const std::string delimiter = "--" + *boundary;
  size_t at = body.find(delimiter);  // a preamble before the first delimiter is ignored
  if (at == std::string::npos) return malformed("no part starts with the boundary");
  int count = 0;
  for (;;) {
    at += delimiter.size();
    if (body.compare(at, 2, "--") == 0) return std::nullopt;  // the closing delimiter
    while (at < body.size() && (body[at] == ' ' || body[at] == '\t')) ++at;
    if (body.compare(at, 2, "\r\n") != 0) return malformed("a boundary line does not end with CRLF");
    at += 2;
    if (++count > limits.max_parts)
      return WireError{400, "the form has more than " + std::to_string(limits.max_parts) + " parts", "too_many_parts"};
    // A part's header fields end with a blank line; a part without any has no name.
    if (body.compare(at, 2, "\r\n") == 0) return malformed("a part has no Content-Disposition");
    const size_t head_end = body.find("\r\n\r\n", at);
    if (head_end == std::string::npos) return malformed("a part's header fields do not end");
    if (head_end - at > limits.max_part_head_bytes)
      return WireError{400, "a part's header fields are over " + std::to_string(limits.max_part_head_bytes) + " bytes",
                       "part_head_too_large"};
    MultipartFormData part;
    if (auto error = read_part_head(body.substr(at, head_end - at), part)) return error;
    const size_t content_start = head_end + 4;
    const size_t next = body.find("\r\n" + delimiter, content_start);
    if (next == std::string::npos) return malformed("part '" + part.name.substr(0, 64) + "' does not end with the boundary");
    part.content = body.substr(content_start, next - content_start);
    std::string name = part.name;
    parts.emplace(std::move(name), std::move(part));
    at = next + 2;
  }
}

}  // namespace flashps::http
