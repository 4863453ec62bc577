// What every route shares: the engine (public API), the job table, the metrics, the limits and
// whether the server is draining. One per server; the route files receive it by reference.
#pragma once
#include <flashps/flashps.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "http/answers_in_flight.h"
#include "http/api_keys.h"
#include "http/edit_form.h"
#include "http/edit_jobs.h"
#include "http/idempotency_keys.h"
#include "http/listen_address.h"
#include "http/router.h"
#include "http/server_metrics.h"
#include "http/wire/connection_loop.h"
#include "http/wire/multipart.h"


namespace flashps::http {

struct ServerOptions {
  ListenAddress listen{"127.0.0.1", 8188};
  int listen_fd = 0;  // > 0: a socket already listening (systemd's); `listen` is then its address
  ApiKeys keys;
  int threads = 16;          // workers serving edits and every other route
  int max_connections = 64;  // requests held by those workers (running or waiting); past it 503
  int health_threads = 2;    // /healthz, /readyz, /metrics: their own workers, never behind edits
  int64_t max_body_bytes = int64_t{64} << 20;
  TransportLimits transport;  // its max_body_bytes is set from the one above
  MultipartLimits multipart;
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
  AnswersInFlight answers;                 // POST edits and templates until answered (drain)
  std::atomic<bool> cancel_captures{false};  // a drain out of time: they stop at their next step

  // Throws HttpError(503) while draining: edits are no longer taken.
  void check_accepting() const;
  // "http://host:port" as the client addressed us (its Host header), for links in answers.
  static std::string base_url(const std::string& host_header, int port);
};

// The route groups (one file each).
void add_openai_routes(Router& server, ServerContext& context);
void add_edit_routes(Router& server, ServerContext& context);
void add_template_routes(Router& server, ServerContext& context);
void add_operations_routes(Router& server, ServerContext& context);

}  // namespace flashps::http
