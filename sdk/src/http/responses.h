// Writing answers: JSON bodies, the one error shape, and a guard that turns any exception a route
// throws into that shape (never a crash, never an HTML page).
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "http/http_error.h"
#include "http/wire/message.h"

namespace flashps::http {

void respond_json(Response& response, int status, const nlohmann::json& body);
void respond_error(Response& response, const HttpError& error);

using Route = std::function<void(const Request&, Response&)>;
// HttpError as is; sdk::Error by http_status_of; std::bad_alloc 503; anything else 500.
Route guarded(Route route);

// "done", "failed", "cancelled", "deadline_exceeded" for a finished job; else its status name.
std::string outcome_name(const struct JobView& view);

// The edit-status JSON shared by the native routes and the event stream.
nlohmann::json job_json(const struct JobView& view, const std::string& base_url);

}  // namespace flashps::http
