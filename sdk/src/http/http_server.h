// `flashps serve`'s server: cpp-httplib (Debian's libcpp-httplib) on the public SDK. Binds at
// construction (a taken port fails there, naming it), serves on its own threads, and drains or
// closes on request. Requests pass, in order: the connection cap (503), the API key (401), the
// body limit (413), then a route; every answer is counted and gets one access-log line.
#pragma once
#include <flashps/flashps.hpp>

#include <memory>
#include <thread>

#include "http/server_context.h"

namespace httplib {
class Server;
}

namespace flashps::http {

struct ServerStats {
  int port = 0, connections = 0, queued = 0, running = 0;
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
  // Stops taking edits, waits up to `seconds` for those in flight, cancels the rest; returns how
  // many were cancelled.
  int drain(double seconds);
  // Idempotent.
  void close();

 private:
  void install_hooks();

  std::unique_ptr<ServerContext> context_;
  std::unique_ptr<httplib::Server> server_;
  std::thread listener_;
  bool closed_ = false;
};

}  // namespace flashps::http
