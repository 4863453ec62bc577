// FlashPS C++ wrapper, part of <flashps/flashps.hpp> (include that).
// The HTTP server (flashps/server.h): serve an engine over HTTP, drain, close.
#ifndef FLASHPS_CPP_SERVER_HPP
#define FLASHPS_CPP_SERVER_HPP

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "flashps/cpp/common.hpp"
#include "flashps/cpp/engine.hpp"
#include "flashps/cpp/store.hpp"

namespace flashps::sdk {

struct ServerOptions {
  std::string listen = "127.0.0.1:8188";  // port 0: any free port (Server::port())
  std::string api_key_file;              // required when `listen` is not loopback
  int threads = 0;                       // connection threads; 0: 16
  int max_connections = 0;               // 0: threads
  int64_t max_body_bytes = 0;            // 0: 64 MiB
  int64_t max_pixels = 0;                // 0: 16777216
  int max_prompt_chars = 0;              // 0: 4000
  int max_images = 0;                    // 0: 4
  int keep_results = 0;                  // 0: 256
  double keep_results_seconds = 0;       // 0: 600
  std::string model_name;                // empty: the model folder's name
  Store store;                           // GET /v1/templates; empty: 501
  std::function<void(const std::string& line)> access_log;  // one JSON line per request
  int listen_fd = 0;  // > 0: serve on this listening socket (systemd's, fd 3), not `listen`
};

struct ServerStats {
  int port = 0, connections = 0, queued = 0, running = 0;
  int64_t http_requests = 0, done = 0, failed = 0, cancelled = 0, rejected = 0;
  bool draining = false;
  int template_captures = 0;  // POST /v1/templates running now
};

// Serves `engine` (which must outlive the server) until drained or closed.
class Server {
 public:
  Server() = default;
  static Server start(const Engine& engine, const ServerOptions& options = {}) {
    Server result;
    result.state_ = std::make_shared<State>();
    result.state_->access_log = options.access_log;
    result.state_->store = options.store;  // the C server borrows the handle: keep it open
    flashps_server_params params = flashps_server_default_params();
    params.listen = options.listen.c_str();
    params.api_key_file = detail::c_str_or_null(options.api_key_file);
    if (options.threads) params.threads = options.threads;
    if (options.max_connections) params.max_connections = options.max_connections;
    if (options.max_body_bytes) params.max_body_bytes = options.max_body_bytes;
    if (options.max_pixels) params.max_pixels = options.max_pixels;
    if (options.max_prompt_chars) params.max_prompt_chars = options.max_prompt_chars;
    if (options.max_images) params.max_images = options.max_images;
    if (options.keep_results) params.keep_results = options.keep_results;
    if (options.keep_results_seconds > 0) params.keep_results_seconds = options.keep_results_seconds;
    params.model_name = detail::c_str_or_null(options.model_name);
    params.store = options.store.get();
    params.listen_fd = options.listen_fd;
    if (options.access_log) {
      params.access_log = [](const char* line, void* user_data) {
        try {
          static_cast<State*>(user_data)->access_log(line ? line : "");
        } catch (...) {
        }
      };
      params.user_data = result.state_.get();
    }
    flashps_server* server = nullptr;
    check(flashps_server_start(engine.get(), &params, &server));
    result.state_->handle = server;
    return result;
  }
  explicit operator bool() const { return state_ && state_->handle; }
  int port() const { return flashps_server_port(state_->handle); }
  ServerStats stats() const {
    flashps_server_stats c{};
    c.struct_size = sizeof(c);
    check(flashps_server_get_stats(state_->handle, &c));
    return {c.port, c.connections, c.queued, c.running, c.http_requests, c.edits_done, c.edits_failed,
            c.edits_cancelled, c.edits_rejected, c.draining != 0, c.template_captures};
  }
  // Stops taking edits, waits up to `seconds`, cancels the rest; returns how many were cancelled.
  int drain(double seconds) const {
    int cancelled = 0;
    check(flashps_server_drain(state_->handle, seconds, &cancelled));
    return cancelled;
  }
  // Stops serving (also done by the last copy's destructor).
  void close() { state_.reset(); }

 private:
  struct State {
    flashps_server* handle = nullptr;
    std::function<void(const std::string&)> access_log;
    Store store;
    ~State() { flashps_server_close(handle); }  // before `store` closes (members go after)
  };
  std::shared_ptr<State> state_;
};

}  // namespace flashps::sdk

#endif  // FLASHPS_CPP_SERVER_HPP
