// The one error shape every endpoint answers with: OpenAI's
//   {"error": {"message": "...", "type": "invalid_request_error", "param": "mask", "code": null}}
// so its client libraries raise their usual exceptions, and native clients parse one shape.
#pragma once
#include <stdexcept>
#include <string>

#include "flashps/common.h"

namespace flashps::http {

class HttpError : public std::runtime_error {
 public:
  HttpError(int status, std::string message, std::string param = {}, std::string code = {});
  int status() const { return status_; }
  // OpenAI's types: invalid_request_error (4xx), authentication_error (401), rate_limit_error
  // (429), server_error (5xx).
  std::string type() const;
  const std::string& param() const { return param_; }
  const std::string& code() const { return code_; }
  std::string json() const;

 private:
  int status_;
  std::string param_, code_;
};

// The HTTP status an SDK failure maps to: invalid input 400, not found 404, an image over the
// pixel budget 413 (when `decoding`), queue full 429, cancelled 499→503 (shutting down),
// deadline 504, the rest 500.
int http_status_of(flashps_status status, bool decoding = false);

}  // namespace flashps::http
