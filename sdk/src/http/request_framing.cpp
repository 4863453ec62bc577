#include "http/request_framing.h"

#include <httplib.h>

namespace flashps::http {

std::optional<HttpError> refuse_unbounded_body(const httplib::Request& request) {
  if (request.has_header("Transfer-Encoding"))
    return HttpError(411, "send the request body with a Content-Length (chunked uploads are not taken)", "",
                     "length_required");
  const std::string encoding = request.get_header_value("Content-Encoding");
  if (!encoding.empty() && encoding != "identity")
    return HttpError(415, "compressed request bodies (Content-Encoding: " + encoding.substr(0, 40) +
                              ") are not taken; send it uncompressed",
                     "", "unsupported_content_encoding");
  const bool takes_body = request.method == "POST" || request.method == "PUT" || request.method == "PATCH";
  if (takes_body && !request.has_header("Content-Length"))
    return HttpError(411, "a " + request.method + " needs a Content-Length", "", "length_required");
  return std::nullopt;
}

}  // namespace flashps::http
