// For operators and orchestrators: GET /healthz (the process answers), GET /readyz (the model is
// loaded and edits are taken; 503 while draining) and GET /metrics (Prometheus text format).
#include "http/router.h"

#include "http/responses.h"
#include "http/server_context.h"

namespace flashps::http {

void add_operations_routes(Router& server, ServerContext& context) {
  server.Get("/healthz", guarded([](const Request&, Response& response) {
               respond_json(response, 200, {{"status", "ok"}});
             }));
  server.Get("/readyz", guarded([&context](const Request&, Response& response) {
               const bool draining = context.draining.load();
               respond_json(response, draining ? 503 : 200,
                            {{"status", draining ? "draining" : "ready"},
                             {"model", context.model_name},
                             {"device", context.model.device}});
             }));
  server.Get("/metrics", guarded([&context](const Request&, Response& response) {
               response.status = 200;
               response.set_content(context.metrics.prometheus(context.engine.counters(), !context.draining.load()),
                                    "text/plain; version=0.0.4; charset=utf-8");
             }));
}

}  // namespace flashps::http
