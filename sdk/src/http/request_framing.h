// Which request bodies the server reads at all, decided from the headers before httplib reads
// the body. cpp-httplib 0.11 applies its payload limit only to bodies sent with a Content-Length:
// a chunked body, a POST without a length (read until the connection closes) and a compressed
// body (inflated without a limit; a 2 KB brotli body can inflate to gigabytes) are all read
// whole. So a body must come with a Content-Length and without a Content-Encoding; every client
// this server is for (curl, the OpenAI libraries, browsers' FormData) sends it that way.
#pragma once
#include <optional>

#include "http/http_error.h"

namespace httplib {
struct Request;
}

namespace flashps::http {

// 411 (chunked, or a POST/PUT/PATCH without Content-Length) or 415 (Content-Encoding other than
// identity); nullopt when the body may be read.
std::optional<HttpError> refuse_unbounded_body(const httplib::Request& request);

}  // namespace flashps::http
