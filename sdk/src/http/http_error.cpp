#include "http/http_error.h"

#include <nlohmann/json.hpp>

namespace flashps::http {

HttpError::HttpError(int status, std::string message, std::string param, std::string code)
    : std::runtime_error(std::move(message)), status_(status), param_(std::move(param)), code_(std::move(code)) {}

std::string HttpError::type() const {
  if (status_ == 401) return "authentication_error";
  if (status_ == 429) return "rate_limit_error";
  if (status_ >= 500) return "server_error";
  return "invalid_request_error";
}

std::string HttpError::json() const {
  nlohmann::json error = {{"message", what()}, {"type", type()}, {"param", nullptr}, {"code", nullptr}};
  if (!param_.empty()) error["param"] = param_;
  if (!code_.empty()) error["code"] = code_;
  // Messages may quote user text: replace invalid UTF-8 rather than throw.
  return nlohmann::json{{"error", error}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

int http_status_of(flashps_status status, bool decoding) {
  switch (status) {
    case FLASHPS_INVALID_ARGUMENT:
    case FLASHPS_CORRUPT_DATA: return 400;
    case FLASHPS_NOT_FOUND: return 404;
    case FLASHPS_UNSUPPORTED: return decoding ? 413 : 422;
    case FLASHPS_REJECTED: return 429;
    case FLASHPS_CANCELLED: return 503;
    case FLASHPS_DEADLINE_EXCEEDED: return 504;
    case FLASHPS_OUT_OF_MEMORY: return 503;
    default: return 500;
  }
}

}  // namespace flashps::http
