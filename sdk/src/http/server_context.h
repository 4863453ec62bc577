// What every route shares: the engine (public API), the job table, the metrics, the limits and
// whether the server is draining. One per server; the route files receive it by reference.
#pragma once
#include <flashps/flashps.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "http/api_keys.h"
#include "http/edit_form.h"
#include "http/edit_jobs.h"
#include "http/idempotency_keys.h"
#include "http/listen_address.h"
#include "http/server_metrics.h"

namespace httplib {
class Server;
}

namespace flashps::http {

struct ServerOptions {
  ListenAddress listen{"127.0.0.1", 8188};
  ApiKeys keys;
  int threads = 16;
  int max_connections = 64;
  int64_t max_body_bytes = int64_t{64} << 20;
  FormLimits limits;
  JobRetention retention;
  std::string model_name;                          // empty: the model folder's name
  flashps_store* store = nullptr;                  // GET /v1/templates; not owned
  std::function<void(const std::string&)> access_log;
};

struct ServerContext {
  ServerContext(sdk::Engine engine, ServerOptions options);

  sdk::Engine engine;
  ServerOptions options;
  sdk::ModelInfo model;
  std::string model_name;
  ServerMetrics metrics;
  std::unique_ptr<EditJobs> jobs;
  std::unique_ptr<IdempotencyKeys> idempotency_keys;  // Idempotency-Key on the edit routes
  std::atomic<bool> draining{false};
  int port = 0;

  // Throws HttpError(503) while draining: edits are no longer taken.
  void check_accepting() const;
  // "http://host:port" as the client addressed us (its Host header), for links in answers.
  static std::string base_url(const std::string& host_header, int port);
};

// Seconds since this connection thread's current request had its headers read (the server's
// pre-routing hook): a route's own start minus this is the time httplib took to read and parse
// the body. 0 outside a request.
double seconds_since_request_headers();

// The route groups (one file each).
void add_openai_routes(httplib::Server& server, ServerContext& context);
void add_edit_routes(httplib::Server& server, ServerContext& context);
void add_template_routes(httplib::Server& server, ServerContext& context);
void add_operations_routes(httplib::Server& server, ServerContext& context);

}  // namespace flashps::http
