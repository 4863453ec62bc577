#include "http/http_server.h"

#include <httplib.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>
#include <random>

#include "http/connection_queue.h"
#include "http/request_framing.h"
#include "http/responses.h"

namespace flashps::http {
namespace {

using Clock = std::chrono::steady_clock;

// Set when a request starts on this connection thread (the pre-routing hook), read by the logger.
thread_local Clock::time_point request_start;

bool needs_key(const std::string& path) { return path != "/healthz" && path != "/readyz"; }

// A client's X-Request-Id is kept when it is short and plain (it ends up in logs); else ours.
std::string request_id_for(const httplib::Request& request) {
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

// The declared body length (0 when absent or malformed). Parsed here: httplib's typed getter is
// get_header_value<uint64_t> in 0.11 (Debian 12) and get_header_value_u64 in 0.18 (Debian 13).
uint64_t content_length(const httplib::Request& request) {
  return std::strtoull(request.get_header_value("Content-Length").c_str(), nullptr, 10);
}

bool has_body(const httplib::Request& request) { return content_length(request) > 0; }

// A request without a body is refused at once; one with a body after httplib has read it (see
// defer_refusal).
httplib::Server::HandlerResponse refuse(const httplib::Request& request, httplib::Response& response,
                                        const HttpError& error) {
  if (has_body(request)) {
    defer_refusal(error);
    return httplib::Server::HandlerResponse::Unhandled;
  }
  respond_error(response, error);
  if (error.status() == 503) response.set_header("Connection", "close");
  return httplib::Server::HandlerResponse::Handled;
}

}  // namespace

double seconds_since_request_headers() {
  if (request_start.time_since_epoch().count() == 0) return 0;
  return std::chrono::duration<double>(Clock::now() - request_start).count();
}

HttpServer::HttpServer(sdk::Engine engine, ServerOptions options) {
  if (!options.listen.loopback() && options.keys.empty())
    throw sdk::Error(FLASHPS_INVALID_ARGUMENT,
                     "listening on " + options.listen.text() +
                         " (not loopback) needs API keys: pass --api-key-file (one key per line), or listen on "
                         "127.0.0.1");
  if (options.threads <= 0) throw sdk::Error(FLASHPS_INVALID_ARGUMENT, "threads must be positive");
  if (options.max_connections <= 0) throw sdk::Error(FLASHPS_INVALID_ARGUMENT, "max_connections must be positive");
  context_ = std::make_unique<ServerContext>(std::move(engine), std::move(options));
  server_ = std::make_unique<httplib::Server>();
  ServerContext& context = *context_;
  server_->new_task_queue = [&context] {
    return new ConnectionQueue(context.options.threads, context.options.max_connections, context.metrics.connections);
  };
  server_->set_payload_max_length(static_cast<size_t>(context.options.max_body_bytes));
  // A client that stops sending mid-request holds a thread for at most this long.
  server_->set_read_timeout(10, 0);
  // One request per connection. httplib 0.11 keeps a connection open after an answer given
  // before the body was read, and would parse the unread body as the next request; it also frees
  // the connection's thread at once instead of holding it through an idle keep-alive wait (the
  // connection cap counts threads). A new loopback connection per edit costs well under 1 ms.
  server_->set_keep_alive_max_count(1);
  // httplib sets SO_REUSEPORT by default: a second server on the same port would then start and
  // silently take half the connections. SO_REUSEADDR alone allows a quick restart, not that.
  server_->set_socket_options([](socket_t socket) {
    int yes = 1;
    ::setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, reinterpret_cast<const void*>(&yes), sizeof(yes));
  });
  server_->set_write_timeout(30, 0);
  // httplib writes headers and body separately; with Nagle's algorithm on, the body's last
  // partial segment waits for the client's ACK of the headers (a delayed-ACK tail of milliseconds).
  server_->set_tcp_nodelay(true);
  install_hooks();
  add_openai_routes(*server_, context);
  add_edit_routes(*server_, context);
  add_template_routes(*server_, context);
  add_operations_routes(*server_, context);

  const ListenAddress& address = context.options.listen;
  if (address.port == 0) {
    context.port = server_->bind_to_any_port(address.host);
    if (context.port <= 0)
      throw sdk::Error(FLASHPS_IO_ERROR, "cannot listen on " + address.text() + ": no free port on that address");
  } else {
    if (!server_->bind_to_port(address.host, address.port))
      throw sdk::Error(FLASHPS_IO_ERROR, "cannot listen on " + address.text() +
                                             ": the address is in use or not this machine's (another server "
                                             "running? pick another --listen port)");
    context.port = address.port;
  }
  listener_ = std::thread([this] { server_->listen_after_bind(); });
}

HttpServer::~HttpServer() { close(); }

void HttpServer::install_hooks() {
  ServerContext& context = *context_;
  server_->set_pre_routing_handler([&context](const httplib::Request& request, httplib::Response& response) {
    request_start = Clock::now();
    clear_deferred_refusal();
    response.set_header("X-Request-Id", request_id_for(request));
    if (const auto unbounded = refuse_unbounded_body(request)) {  // answered before httplib reads it
      respond_error(response, *unbounded);
      return httplib::Server::HandlerResponse::Handled;
    }
    if (ConnectionQueue::over_capacity())
      return refuse(request, response, HttpError(503,
                                        "too many connections (at most " +
                                            std::to_string(context.options.max_connections) + "); retry later",
                                        "", "too_many_connections"));
    if (!context.options.keys.empty() && needs_key(request.path) &&
        !context.options.keys.accepts(request.get_header_value("Authorization")))
      return refuse(request, response, HttpError(401,
                                        request.has_header("Authorization")
                                            ? "the API key is not valid for this server"
                                            : "this server needs an API key: send 'Authorization: Bearer <key>'",
                                        "", "invalid_api_key"));
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // Answers httplib makes itself (404, 413, 400 for a malformed request) get the JSON error shape.
  server_->set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request& request,
                                                                      httplib::Response& response) {
    if (!response.has_header("X-Request-Id")) response.set_header("X-Request-Id", request_id_for(request));
    // An unauthenticated client learns nothing about routes or limits: its refusal comes first.
    if (answer_deferred_refusal(response)) return httplib::Server::HandlerResponse::Handled;
    if (!response.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    std::string message;
    switch (response.status) {
      case 404: message = "no route for " + request.method + " " + request.path.substr(0, 200); break;
      case 413: message = "the request body is larger than this server takes (--max-body-mb)"; break;
      case 400: message = "malformed HTTP request"; break;
      default: message = "HTTP " + std::to_string(response.status);
    }
    respond_error(response, HttpError(response.status, message));
    return httplib::Server::HandlerResponse::Handled;
  }));
  server_->set_exception_handler([](const httplib::Request&, httplib::Response& response, std::exception_ptr) {
    respond_error(response, HttpError(500, "internal error"));
  });
  server_->set_logger([&context](const httplib::Request& request, const httplib::Response& response) {
    context.metrics.count_http(response.status);
    if (!context.options.access_log) return;
    const double ms = request_start.time_since_epoch().count() == 0
                          ? -1
                          : std::chrono::duration<double, std::milli>(Clock::now() - request_start).count();
    nlohmann::json line = {{"time", utc_now()},
                           {"request_id", response.get_header_value("X-Request-Id")},
                           {"remote", request.remote_addr},
                           {"method", request.method},
                           {"path", request.path.substr(0, 256)},
                           {"status", response.status},
                           {"bytes_in", content_length(request)},
                           {"bytes_out", response.body.size()},
                           {"ms", std::round(ms * 100) / 100}};
    if (response.has_header("X-Flashps-Edit-Ids")) line["edits"] = response.get_header_value("X-Flashps-Edit-Ids");
    request_start = {};
    context.options.access_log(line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  });
}

ServerStats HttpServer::stats() const {
  const ServerMetrics& metrics = context_->metrics;
  ServerStats stats;
  stats.port = context_->port;
  stats.connections = metrics.connections.load();
  stats.queued = metrics.queued.load();
  stats.running = metrics.running.load();
  stats.http_requests = metrics.http_requests();
  stats.done = metrics.outcome("done");
  stats.failed = metrics.outcome("failed") + metrics.outcome("deadline_exceeded");
  stats.cancelled = metrics.outcome("cancelled");
  stats.rejected = metrics.outcome("rejected");
  stats.draining = context_->draining.load();
  return stats;
}

int HttpServer::drain(double seconds) {
  context_->draining = true;
  if (context_->jobs->wait_all_finished(seconds)) return 0;
  const int cancelled = context_->jobs->cancel_all();
  context_->jobs->wait_all_finished(60);  // cancels land at the next step boundary
  return cancelled;
}

void HttpServer::close() {
  if (closed_) return;
  closed_ = true;
  context_->draining = true;
  context_->jobs->cancel_all();
  context_->jobs->wait_all_finished(60);  // blocked requests and event streams then answer and end
  server_->stop();
  if (listener_.joinable()) listener_.join();
  server_.reset();
  context_.reset();
}

}  // namespace flashps::http
