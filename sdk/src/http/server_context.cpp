#include "http/server_context.h"

#include <algorithm>
#include <filesystem>

#include "http/http_error.h"

namespace flashps::http {

ServerContext::ServerContext(sdk::Engine engine_, ServerOptions options_)
    : engine(std::move(engine_)), options(std::move(options_)), model(engine.info()) {
  model_name = options.model_name;
  if (model_name.empty()) model_name = std::filesystem::path(model.model_dir).filename().string();
  if (model_name.empty()) model_name = "flashps";
  jobs = std::make_unique<EditJobs>(engine, metrics, options.retention);
  // Keys live as long as finished edits are kept: a key whose edit is forgotten cannot replay it.
  idempotency_keys = std::make_unique<IdempotencyKeys>(
      IdempotencyLimits{static_cast<size_t>(std::max(16, 4 * options.retention.keep_results)), options.retention.keep_seconds});
}

void ServerContext::check_accepting() const {
  if (draining.load()) throw HttpError(503, "the server is shutting down and takes no new edits", "", "draining");
}

std::string ServerContext::base_url(const std::string& host_header, int port) {
  // Only characters a host[:port] can hold: the header is the client's, and ends up in answers.
  bool plain = !host_header.empty() && host_header.size() <= 255;
  for (const char c : host_header)
    plain &= std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':' || c == '[' || c == ']';
  return "http://" + (plain ? host_header : "127.0.0.1:" + std::to_string(port));
}

}  // namespace flashps::http
