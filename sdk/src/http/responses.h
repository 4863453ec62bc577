// Writing answers: JSON bodies, the one error shape, and a guard that turns any exception a route
// throws into that shape (never a crash, never an HTML page).
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "http/http_error.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace flashps::http {

void respond_json(httplib::Response& response, int status, const nlohmann::json& body);
void respond_error(httplib::Response& response, const HttpError& error);

// A refusal decided before the body was read (a missing key, the connection cap) is answered
// after httplib has read the body: closing on a client that is still uploading resets the
// connection, and the client sees a broken pipe instead of the 401/503. Thread-local: one request
// at a time runs on a connection thread.
void defer_refusal(const HttpError& error);
// The deferred refusal, if any, answered into `response` (true), and cleared.
bool answer_deferred_refusal(httplib::Response& response);
void clear_deferred_refusal();

using Route = std::function<void(const httplib::Request&, httplib::Response&)>;
// HttpError as is; sdk::Error by http_status_of; std::bad_alloc 503; anything else 500.
Route guarded(Route route);

// "done", "failed", "cancelled", "deadline_exceeded" for a finished job; else its status name.
std::string outcome_name(const struct JobView& view);

// The edit-status JSON shared by the native routes and the event stream.
nlohmann::json job_json(const struct JobView& view, const std::string& base_url);

}  // namespace flashps::http
