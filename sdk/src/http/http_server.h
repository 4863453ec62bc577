// `flashps serve`'s server on the public SDK, on its own transport (wire/): binds at construction
// (a taken port fails there, naming it), serves on its own threads, and drains or closes on
// request. A request passes, in order: the connection limits (total 503, per client address 429),
// its head's budget and deadline (431, 408), the API key (401), the worker cap (503), the body's
// framing and limit (411/415/413, before a byte of it is read), the body's deadline (408), then a
// route on a worker: /healthz, /readyz and /metrics on their own small pool, everything else on
// the main one. Every answer is counted and gets one access-log line.
#pragma once
#include <flashps/flashps.hpp>

#include <memory>

#include "http/server_context.h"
#include "http/wire/connection_loop.h"
#include "http/wire/worker_pool.h"

namespace flashps::http {

struct ServerStats {
  int port = 0, connections = 0, queued = 0, running = 0;
  int template_captures = 0;  // POST /v1/templates running now
  int64_t http_requests = 0, done = 0, failed = 0, cancelled = 0, rejected = 0;
  bool draining = false;
};

class HttpServer {
 public:
  // Throws sdk::Error: INVALID_ARGUMENT (a non-loopback address without keys), IO_ERROR (cannot
  // listen there).
  HttpServer(sdk::Engine engine, ServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const { return context_->port; }
  ServerStats stats() const;
  // Stops taking edits and template captures, waits up to `seconds` for those in flight and for
  // their answers to be written, cancels the rest; returns how many were cancelled.
  int drain(double seconds);
  // Idempotent.
  void close();

 private:
  std::optional<Response> on_head(Request& request);
  std::optional<Response> on_request(const std::shared_ptr<Exchange>& exchange);
  void serve(Exchange& exchange);
  void log_answer(const Request& request, const Response& response, int64_t bytes_out);

  std::unique_ptr<ServerContext> context_;
  Router router_;
  std::unique_ptr<WorkerPool> workers_, health_workers_;
  std::unique_ptr<ConnectionLoop> loop_;
  bool closed_ = false;
};

}  // namespace flashps::http
