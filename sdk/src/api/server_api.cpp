// flashps/server.h: the HTTP server's C API over http/HttpServer.
#include <flashps/flashps.hpp>

#include <memory>
#include <string>

#include "api/abi_layout.h"
#include "api/api_support.h"
#include "http/http_server.h"

struct flashps_server {
  std::unique_ptr<flashps::http::HttpServer> server;
  flashps_access_log_callback access_log = nullptr;
  void* user_data = nullptr;
};

namespace {

using flashps::api::guarded;
using flashps::api::invalid;
namespace http = flashps::http;

// The C errors the wrapper throws keep their status; messages are prefixed by the function.
flashps_status run(const char* function, const std::function<void()>& body) {
  try {
    body();
    return guarded([] {});
  } catch (const flashps::sdk::Error& error) {
    return flashps::api::fail(error.status(), function, error.what());
  } catch (...) {
    return guarded([] { throw; });
  }
}

}  // namespace

extern "C" {

flashps_server_params flashps_server_default_params(void) {
  flashps_server_params params{};
  params.struct_size = sizeof(params);
  params.listen = "127.0.0.1:8188";
  params.threads = 16;
  params.max_connections = 0;  // as many as threads (each served connection holds one)
  params.max_body_bytes = int64_t{64} << 20;
  params.max_pixels = 16777216;
  params.max_prompt_chars = 4000;
  params.max_images = 4;
  params.keep_results = 256;
  params.keep_results_seconds = 600;
  return params;
}

flashps_status flashps_server_start(flashps_engine* engine, const flashps_server_params* given,
                                    flashps_server** server) {
  static constexpr const char* kFunction = "flashps_server_start";
  if (!engine) return invalid(kFunction, "engine is NULL");
  if (!server) return invalid(kFunction, "server (the output) is NULL");
  *server = nullptr;
  flashps_server_params params = flashps_server_default_params();
  if (!flashps::api::read_params(given, flashps::api::kServerParamsV3Size, params, kFunction, "flashps_server_params"))
    return FLASHPS_INVALID_ARGUMENT;
  if (params.threads < 0 || params.max_connections < 0 || params.max_body_bytes < 0 || params.max_pixels < 0 ||
      params.max_prompt_chars < 0 || params.max_images < 0 || params.keep_results < 0 || params.keep_results_seconds < 0)
    return invalid(kFunction, "a limit in flashps_server_params is negative");
  if (params.listen_fd < 0) return invalid(kFunction, "listen_fd is negative (0: bind `listen`)");
  const flashps_server_params defaults = flashps_server_default_params();
  return run(kFunction, [&] {
    http::ServerOptions options;
    // An inherited socket (systemd's) replaces `listen`; the server reads its address from it.
    if (params.listen_fd > 0) options.listen_fd = params.listen_fd;
    else options.listen = http::parse_listen_address(params.listen ? params.listen : defaults.listen);
    if (params.api_key_file && *params.api_key_file) options.keys = http::ApiKeys::load(params.api_key_file);
    options.threads = params.threads > 0 ? params.threads : defaults.threads;
    // Each served connection holds a thread (event streams for minutes): more than the threads
    // would wait unanswered, so the cap is at most the thread count.
    options.max_connections = params.max_connections > 0 ? std::min(params.max_connections, options.threads)
                                                         : options.threads;
    options.max_body_bytes = params.max_body_bytes > 0 ? params.max_body_bytes : defaults.max_body_bytes;
    options.limits.max_pixels = params.max_pixels > 0 ? params.max_pixels : defaults.max_pixels;
    options.limits.max_prompt_chars = params.max_prompt_chars > 0 ? params.max_prompt_chars : defaults.max_prompt_chars;
    options.limits.max_images = params.max_images > 0 ? params.max_images : defaults.max_images;
    options.retention.keep_results = params.keep_results > 0 ? params.keep_results : defaults.keep_results;
    options.retention.keep_seconds =
        params.keep_results_seconds > 0 ? params.keep_results_seconds : defaults.keep_results_seconds;
    if (params.model_name) options.model_name = params.model_name;
    options.store = params.store;
    auto handle = std::make_unique<flashps_server>();
    handle->access_log = params.access_log;
    handle->user_data = params.user_data;
    if (params.access_log) {
      flashps_server* raw = handle.get();
      options.access_log = [raw](const std::string& line) { raw->access_log(line.c_str(), raw->user_data); };
    }
    handle->server = std::make_unique<http::HttpServer>(flashps::sdk::Engine::borrow(engine), std::move(options));
    *server = handle.release();
  });
}

int flashps_server_port(const flashps_server* server) { return server ? server->server->port() : -1; }

flashps_status flashps_server_get_stats(const flashps_server* server, flashps_server_stats* stats) {
  static constexpr const char* kFunction = "flashps_server_get_stats";
  if (!server || !stats) return invalid(kFunction, "server and stats must not be NULL");
  if (!flashps::api::check_output_size(stats->struct_size, flashps::api::kServerStatsV3Size, kFunction,
                                       "flashps_server_stats"))
    return FLASHPS_INVALID_ARGUMENT;
  return run(kFunction, [&] {
    const http::ServerStats counted = server->server->stats();
    flashps_server_stats out{};
    out.port = counted.port;
    out.connections = counted.connections;
    out.queued = counted.queued;
    out.running = counted.running;
    out.http_requests = counted.http_requests;
    out.edits_done = counted.done;
    out.edits_failed = counted.failed;
    out.edits_cancelled = counted.cancelled;
    out.edits_rejected = counted.rejected;
    out.draining = counted.draining ? 1 : 0;
    out.template_captures = counted.template_captures;
    flashps::api::write_output(stats, out);
  });
}

flashps_status flashps_server_drain(flashps_server* server, double seconds, int* cancelled) {
  static constexpr const char* kFunction = "flashps_server_drain";
  if (!server) return invalid(kFunction, "server is NULL");
  if (!(seconds >= 0)) return invalid(kFunction, "seconds must be >= 0");
  return run(kFunction, [&] {
    const int count = server->server->drain(seconds);
    if (cancelled) *cancelled = count;
  });
}

void flashps_server_close(flashps_server* server) {
  if (!server) return;
  try {
    server->server->close();
  } catch (...) {
  }
  delete server;
}

}  // extern "C"
