#include "http/http_server.h"

#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>
#include <nlohmann/json.hpp>
#include <random>

#include "http/listening_socket.h"
#include "http/responses.h"
#include "http/wire/multipart.h"
#include "http/wire/response_writer.h"

namespace flashps::http {
namespace {

using Clock = std::chrono::steady_clock;

bool needs_key(const std::string& path) { return path != "/healthz" && path != "/readyz"; }

// A request that makes work (an edit, a template capture): a drain waits for its answer.
bool takes_work(const Request& request) {
  return request.method == "POST" &&
         (request.path == "/v1/images/edits" || request.path == "/v1/edits" || request.path == "/v1/templates");
}

// Cheap, and what an orchestrator polls: never queued behind edits (their own workers).
bool is_operations_route(const Request& request) {
  return (request.method == "GET" || request.method == "HEAD") &&
         (request.path == "/healthz" || request.path == "/readyz" || request.path == "/metrics");
}

// A client's X-Request-Id is kept when it is short and plain (it ends up in logs); else ours.
std::string request_id_for(const Request& request) {
  const std::string given = request.get_header_value("X-Request-Id");
  bool plain = !given.empty() && given.size() <= 64;
  for (const char c : given) plain &= std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  if (plain) return given;
  thread_local std::mt19937_64 generator{std::random_device{}()};
  char text[24];
  std::snprintf(text, sizeof text, "req_%016llx", static_cast<unsigned long long>(generator()));
  return text;
}

std::string utc_now() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const int millis = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[40];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, millis);
  return text;
}

Response error_answer(const HttpError& error) {
  Response response;
  respond_error(response, error);
  return response;
}

}  // namespace

HttpServer::HttpServer(sdk::Engine engine, ServerOptions options) {
  // A socket handed over (systemd's) is judged by the address it is bound to, like one bound here.
  std::optional<ListeningSocket> adopted;
  if (options.listen_fd > 0) {
    adopted = adopt_listening_socket(options.listen_fd);
    options.listen = adopted->address;
  }
  if (!options.listen.loopback() && options.keys.empty())
    throw sdk::Error(FLASHPS_INVALID_ARGUMENT,
                     "listening on " + options.listen.text() +
                         " (not loopback) needs API keys: pass --api-key-file (one key per line), or listen on "
                         "127.0.0.1");
  if (options.threads <= 0) throw sdk::Error(FLASHPS_INVALID_ARGUMENT, "threads must be positive");
  if (options.max_connections <= 0) throw sdk::Error(FLASHPS_INVALID_ARGUMENT, "max_connections must be positive");
  options.transport.max_body_bytes = options.max_body_bytes;
  context_ = std::make_unique<ServerContext>(std::move(engine), std::move(options));
  ServerContext& context = *context_;
  add_openai_routes(router_, context);
  add_edit_routes(router_, context);
  add_template_routes(router_, context);
  add_operations_routes(router_, context);

  const ListeningSocket listening = adopted ? *adopted : listen_on(context.options.listen);
  const int listen_fd = listening.fd;
  context.port = listening.address.port;
  workers_ = std::make_unique<WorkerPool>(context.options.threads, context.options.max_connections);
  health_workers_ = std::make_unique<WorkerPool>(std::max(1, context.options.health_threads), 64);
  ConnectionLoop::Handlers handlers;
  handlers.on_head = [this](Request& request) { return on_head(request); };
  handlers.on_request = [this](std::shared_ptr<Exchange> exchange) { return on_request(exchange); };
  handlers.on_answered = [this](const Request& request, const Response& response) {
    log_answer(request, response, static_cast<int64_t>(response.body.size()));
  };
  handlers.error_response = [](const WireError& error) {
    return error_answer(HttpError(error.status, error.message, "", error.code));
  };
  loop_ = std::make_unique<ConnectionLoop>(listen_fd, context.options.transport, std::move(handlers),
                                           context.metrics.connections);
}

HttpServer::~HttpServer() { close(); }

std::optional<Response> HttpServer::on_head(Request& request) {
  const ServerContext& context = *context_;
  // Kept on the request: every answer to it carries the same id.
  const std::string request_id = request_id_for(request);
  request.headers.erase("X-Request-Id");
  request.headers.emplace("X-Request-Id", request_id);
  // An unauthenticated client learns nothing about routes or limits: its refusal comes first.
  if (!context.options.keys.empty() && needs_key(request.path) &&
      !context.options.keys.accepts(request.get_header_value("Authorization")))
    return error_answer(HttpError(401,
                                  request.has_header("Authorization")
                                      ? "the API key is not valid for this server"
                                      : "this server needs an API key: send 'Authorization: Bearer <key>'",
                                  "", "invalid_api_key"));
  if (!is_operations_route(request) && workers_->full())
    return error_answer(HttpError(503,
                                  "too many connections (at most " + std::to_string(context.options.max_connections) +
                                      " requests served at once); retry later",
                                  "", "too_many_connections"));
  return std::nullopt;
}

std::optional<Response> HttpServer::on_request(const std::shared_ptr<Exchange>& exchange) {
  const bool operations = is_operations_route(exchange->request);
  WorkerPool& pool = operations ? *health_workers_ : *workers_;
  std::atomic<int>& in_progress = context_->metrics.requests_in_progress;
  if (!operations) ++in_progress;
  if (pool.try_submit([this, exchange, operations, &in_progress] {
        serve(*exchange);
        if (!operations) --in_progress;
      }))
    return std::nullopt;
  if (!operations) --in_progress;
  return error_answer(HttpError(503,
                                "too many connections (at most " + std::to_string(context_->options.max_connections) +
                                    " requests served at once); retry later",
                                "", "too_many_connections"));
}

void HttpServer::serve(Exchange& exchange) {
  Request& request = exchange.request;
  // Counted before the route checks `draining`, and until the answer is written (drain()).
  std::optional<AnswersInFlight::Scope> in_flight;
  if (takes_work(request)) in_flight.emplace(context_->answers);
  Response response;
  if (request.is_multipart_form_data()) {
    if (const auto error = parse_multipart(request.get_header_value("Content-Type"), request.body,
                                           context_->options.multipart, request.files)) {
      respond_error(response, HttpError(error->status, error->message, "", error->code));
    }
    request.body = std::string();  // the parts hold their own copies
  }
  request.started_at = Clock::now();
  if (response.status < 0) {
    try {
      if (!router_.route(request, response))
        respond_error(response, HttpError(404, "no route for " + request.method + " " + request.path.substr(0, 200)));
    } catch (const std::exception& error) {  // routes are guarded; this is the last resort
      response = error_answer(HttpError(500, std::string("internal error: ") + error.what()));
    }
    if (response.status < 0) response.status = 200;  // a route that answered without a status: OK
  }
  response.set_header("X-Request-Id", request.get_header_value("X-Request-Id"));
  SocketWriter writer(exchange.fd(), context_->options.transport.write_seconds, request.presence);
  const int64_t bytes_out = write_response(writer, response, request.method);
  if (!writer.ok() && response.on_undelivered) response.on_undelivered();
  exchange.finish();
  log_answer(request, response, bytes_out);
}

void HttpServer::log_answer(const Request& request, const Response& response, int64_t bytes_out) {
  ServerContext& context = *context_;
  context.metrics.count_http(response.status);
  if (!context.options.access_log) return;
  const auto start = request.accepted_at;
  const double ms = start.time_since_epoch().count() == 0
                        ? -1
                        : std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  const std::string request_id =
      response.has_header("X-Request-Id") ? response.get_header_value("X-Request-Id") : request.get_header_value("X-Request-Id");
  nlohmann::json line = {{"time", utc_now()},
                         {"request_id", request_id},
                         {"remote", request.remote_addr},
                         {"method", request.method.substr(0, 32)},
                         {"path", request.path.substr(0, 256)},
                         {"status", response.status},
                         {"bytes_in", std::strtoull(request.get_header_value("Content-Length").c_str(), nullptr, 10)},
                         {"bytes_out", bytes_out},
                         {"ms", std::round(ms * 100) / 100}};
  if (response.has_header("X-Flashps-Edit-Ids")) line["edits"] = response.get_header_value("X-Flashps-Edit-Ids");
  context.options.access_log(line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

ServerStats HttpServer::stats() const {
  const ServerMetrics& metrics = context_->metrics;
  ServerStats stats;
  stats.port = context_->port;
  stats.connections = metrics.connections.load();
  stats.queued = metrics.queued.load();
  stats.running = metrics.running.load();
  stats.template_captures = metrics.captures_running.load();
  stats.http_requests = metrics.http_requests();
  stats.done = metrics.outcome("done");
  stats.failed = metrics.outcome("failed") + metrics.outcome("deadline_exceeded");
  stats.cancelled = metrics.outcome("cancelled");
  stats.rejected = metrics.outcome("rejected");
  stats.draining = context_->draining.load();
  return stats;
}

int HttpServer::drain(double seconds) {
  ServerContext& context = *context_;
  context.draining = true;
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  const auto seconds_left = [&] { return std::chrono::duration<double>(deadline - Clock::now()).count(); };
  // Edits, template captures, and the answers of both: close() then cuts no answer short.
  if (context.jobs->wait_all_finished(seconds) && context.answers.wait_none(seconds_left())) return 0;
  const int cancelled = context.jobs->cancel_all() + context.metrics.captures_running.load();
  context.cancel_captures = true;
  // Cancels land at the next step boundary; then the cancelled requests answer 503.
  context.jobs->wait_all_finished(60);
  context.answers.wait_none(60);
  return cancelled;
}

void HttpServer::close() {
  if (closed_) return;
  closed_ = true;
  context_->draining = true;
  context_->jobs->cancel_all();
  context_->jobs->wait_all_finished(60);  // blocked requests and event streams then answer and end
  loop_->stop_accepting();                // and what still serves learns its client is gone
  health_workers_->stop();
  workers_->stop();
  loop_->stop();
  context_.reset();
}

}  // namespace flashps::http
