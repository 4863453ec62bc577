// `flashps serve`: the serving engine behind HTTP (OpenAI-compatible and native edit APIs). The
// server itself is the SDK's (flashps/server.h); this command opens the engine and store, prints
// where it listens (or serves on the socket systemd passed: socket_activation.h), shows progress
// on a terminal, and drains on SIGTERM/SIGINT.
#include <flashps/flashps.hpp>

#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "commands.h"
#include "interrupt_signals.h"
#include "model_options.h"
#include "serving_engine.h"
#include "socket_activation.h"
#include "terminal_progress.h"

namespace flashps::cli {
namespace {

namespace fps = flashps::sdk;

struct ServeCommandOptions {
  std::string listen = "127.0.0.1:8188", devices = "cpu", dtype = "fp32", cache_dir, api_key_file, profile;
  std::string batching = "cb", port_file, access_log = "-", model_name;
  ModelPathOptions model;
  size_t max_queue = 64;
  int max_batch = 0, http_threads = 16, max_connections = 0, max_prompt_chars = 4000, max_images = 4;
  double max_body_mb = 64, drain_seconds = 30;
  int64_t max_pixels = 16777216;
  // Denoising yields a core to the connection threads: without it, P95 HTTP overhead grew from
  // 4 to 6-8 ms when edits held every core (benchmarks/README.md, bench http).
  int compute_nice = 10;
  bool quiet = false;
};

// The port goes to a file once the server listens (scripts pass --listen ...:0): written to a
// temporary name and renamed, so a reader never sees it half written.
void write_port_file(const std::string& path, int port) {
  const std::string temporary = path + ".partial";
  {
    std::ofstream file(temporary, std::ios::trunc);
    file << port << "\n";
    if (!file.flush()) throw fps::Error(FLASHPS_IO_ERROR, temporary + ": cannot write the port file");
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0)
    throw fps::Error(FLASHPS_IO_ERROR, path + ": cannot write the port file");
}

// "-": stdout; "off": none; else appended to the file. Lines are whole (one write per line).
std::function<void(const std::string&)> access_log_writer(const std::string& target) {
  if (target == "off") return {};
  std::FILE* file = stdout;
  if (target != "-") {
    file = std::fopen(target.c_str(), "a");
    if (!file) throw fps::Error(FLASHPS_IO_ERROR, target + ": cannot open the access log for appending");
  }
  auto mutex = std::make_shared<std::mutex>();
  return [file, mutex](const std::string& line) {
    std::lock_guard<std::mutex> lock(*mutex);
    std::fprintf(file, "%s\n", line.c_str());
    std::fflush(file);
  };
}

int serve(const ServeCommandOptions& options) {
  // glibc gives each thread that allocates its own arena (up to 8 per core). With dozens of
  // connection threads handling megabyte bodies, freed memory kept in those arenas made RSS creep
  // between load rounds (tests/http/http_load_faults.sh) although memory in use stayed flat.
  ::mallopt(M_ARENA_MAX, 4);
  // Before the model loads: a socket passed by systemd (flashps.socket) replaces --listen.
  const int inherited_fd = inherited_listen_fd();
  const ServingEngine serving =
      open_serving_engine({options.model, options.devices, options.dtype, options.cache_dir, options.batching,
                           options.profile, options.max_batch, options.max_queue, options.quiet, options.compute_nice});
  const fps::Engine& engine = serving.engine;
  finish_progress_line(options.quiet);

  fps::ServerOptions server_options;
  server_options.listen = options.listen;
  server_options.api_key_file = options.api_key_file;
  server_options.threads = options.http_threads;
  server_options.max_connections = options.max_connections;
  server_options.max_body_bytes = static_cast<int64_t>(options.max_body_mb * 1024 * 1024);
  server_options.max_pixels = options.max_pixels;
  server_options.max_prompt_chars = options.max_prompt_chars;
  server_options.max_images = options.max_images;
  server_options.model_name = options.model_name;
  server_options.store = serving.store;
  server_options.access_log = access_log_writer(options.access_log);
  server_options.listen_fd = inherited_fd;
  InterruptSignals interrupts(
      "\nflashps: stopping: draining (no new edits; running ones finish or are cancelled), again to quit at once\n");
  fps::Server server = fps::Server::start(engine, server_options);

  const fps::ModelInfo model = engine.info();
  const std::string shown_host = options.listen.substr(0, options.listen.rfind(':'));
  const std::string shown_address = inherited_fd > 0 ? bound_address_text(inherited_fd)
                                                     : (shown_host.empty() ? "0.0.0.0" : shown_host) + ":" +
                                                           std::to_string(server.port());
  std::cerr << "flashps: serving " << model.model_dir << " (" << model.device << ") on http://" << shown_address
            << (inherited_fd > 0 ? " (socket from systemd)" : "")
            << (options.api_key_file.empty() ? "" : " (API key required)") << "\n";
  if (!options.port_file.empty()) write_port_file(options.port_file, server.port());

  const bool show_status = !options.quiet && ::isatty(STDERR_FILENO);
  auto last_status = std::chrono::steady_clock::now();
  while (InterruptSignals::requested_signal() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (show_status && std::chrono::steady_clock::now() - last_status > std::chrono::seconds(1)) {
      last_status = std::chrono::steady_clock::now();
      const fps::ServerStats stats = server.stats();
      std::fprintf(stderr, "\r\033[Kserving :%d  %d running, %d queued  %lld done, %lld failed, %lld cancelled  %d connections",
                   stats.port, stats.running, stats.queued, static_cast<long long>(stats.done),
                   static_cast<long long>(stats.failed), static_cast<long long>(stats.cancelled), stats.connections);
    }
  }
  if (show_status) std::fprintf(stderr, "\n");
  const fps::ServerStats before = server.stats();
  std::cerr << "flashps: draining " << before.running + before.queued << " edits"
            << (before.template_captures > 0 ? " and " + std::to_string(before.template_captures) + " template captures" : std::string())
            << " (up to " << options.drain_seconds << " s)\n";
  const int cancelled = server.drain(options.drain_seconds);
  const fps::ServerStats after = server.stats();
  server.close();
  std::cerr << "flashps: stopped"
            << (cancelled > 0 ? ": " + std::to_string(cancelled) + " edits or captures cancelled" : "")
            << "; " << after.http_requests << " requests served\n";
  if (!options.port_file.empty()) std::remove(options.port_file.c_str());
  return 0;
}

}  // namespace

void add_serve_command(CLI::App& app, CommandAction& action) {
  static ServeCommandOptions options;
  CLI::App* serve_command = app.add_subcommand(
      "serve", "Serve edits over HTTP: OpenAI-compatible /v1/images/edits and the native API (docs/http-api.md)");
  add_model_options(serve_command, options.model);
  serve_command->add_option("--listen", options.listen,
                            "host:port ([::1]:port for IPv6; port 0 picks a free one). Not loopback: needs "
                            "--api-key-file. A socket passed by systemd (LISTEN_FDS) replaces it")
      ->capture_default_str();
  serve_command->add_option("--devices", options.devices, "Workers: cpu, cuda, cuda:N list, or auto")
      ->capture_default_str();
  serve_command->add_option("--dtype", options.dtype, "Transformer precision: fp32 or bf16")
      ->check(CLI::IsMember({"fp32", "bf16"}))
      ->capture_default_str();
  serve_command->add_option("--api-key-file", options.api_key_file,
                            "API keys, one per line (at least 16 characters); clients send 'Authorization: Bearer "
                            "<key>'")
      ->envname("FLASHPS_API_KEY_FILE");
  serve_command->add_option("--max-queue", options.max_queue, "Edits waiting at most; more get 429")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  serve_command->add_option("--max-batch", options.max_batch,
                            "Edits denoised together per worker; 0: per device (1 where its profile measured that "
                            "batching saves no time, else 8)")
      ->check(CLI::Range(0, FLASHPS_MAX_BATCH))
      ->capture_default_str();
  serve_command->add_option("--max-body-mb", options.max_body_mb, "Request body limit (MiB); larger gets 413")
      ->check(CLI::Range(0.001, 4096.0))
      ->capture_default_str();
  serve_command->add_option("--max-pixels", options.max_pixels, "Pixels per image (width x height); more get 413")
      ->check(CLI::Range(int64_t{1}, int64_t{64000000}))
      ->capture_default_str();
  serve_command->add_option("--max-prompt-chars", options.max_prompt_chars, "Prompt length limit; longer get 422")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  serve_command->add_option("--max-images", options.max_images, "OpenAI 'n' at most; more get 422")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  serve_command->add_option("--cache-dir", options.cache_dir, "Activation store directory");
  serve_command->add_option("--batching", options.batching, "static-full, static, naive-cb or cb")->capture_default_str();
  serve_command->add_option("--profile", options.profile, "Device profile from `flashps profile` (for routing)");
  serve_command->add_option("--http-threads", options.http_threads,
                            "Workers serving read requests (--threads sets compute threads, as everywhere)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  serve_command->add_option("--max-connections", options.max_connections,
                            "Requests served at once; more get 503 (default and at most: --http-threads)")
      ->check(CLI::Range(1, 4096));
  serve_command->add_option("--drain-seconds", options.drain_seconds,
                            "On SIGTERM/SIGINT: wait this long for running edits, then cancel the rest")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  serve_command->add_option("--port-file", options.port_file, "Write the port listened on to this file once listening");
  serve_command->add_option("--access-log", options.access_log, "One JSON line per request: - (stdout), a file, or off")
      ->capture_default_str();
  serve_command->add_option("--model-name", options.model_name, "The name answers report as 'model'");
  serve_command->add_option("--compute-nice", options.compute_nice,
                            "Nice value added to the denoising threads, so HTTP threads get a core first (0: off)")
      ->check(CLI::Range(0, FLASHPS_MAX_COMPUTE_NICE))
      ->capture_default_str();
  serve_command->add_flag("--quiet,-q", options.quiet, "No loading bar or status line");
  serve_command->callback([&action] { action = [] { return serve(options); }; });
}

}  // namespace flashps::cli
