// The load-and-abuse benchmark's shared vocabulary: options, clocks, and stop flags.
// (main.cpp says what the program measures and how.)
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace abuse {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}
inline void sleep_seconds(double seconds) {
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}
// Sleeps up to `seconds` in small slices; returns false as soon as `stop` is set.
inline bool sleep_unless(const std::atomic<bool>& stop, double seconds) {
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  while (!stop.load()) {
    const double left = std::chrono::duration<double>(until - Clock::now()).count();
    if (left <= 0) return true;
    sleep_seconds(left < 0.05 ? left : 0.05);
  }
  return false;
}

// The header flood comes last: the memory it makes a server keep (never returned) would otherwise be
// every later phase's start, and a flood aborted at the RSS cap would skip them.
inline const std::vector<std::string> kAllPhases = {"alone", "slowloris", "disconnect", "huge_body", "header_flood"};

struct Options {
  int port = 0;
  int server_pid = 0;                  // for RSS (/proc/<pid>/status); 0: no RSS
  std::string api_key;                 // sent by ordinary clients, /metrics and the disconnecters
  std::vector<std::string> phases = kAllPhases;
  double phase_seconds = 20;           // ordinary requests start only within this window
  double grace_seconds = 10;           // then requests in flight may still finish, abuse going on
  double settle_seconds = 30;          // between phases: wait for the server's queue to empty
  // ordinary clients
  int clients = 4;
  std::string route = "openai";        // openai (one blocking request) | native (submit, poll, result)
  int steps = 1;
  std::string image_path, mask_path;   // mask: white-on-black (native); OpenAI gets an alpha mask made here
  double request_timeout = 60;
  double health_interval = 0.2, health_timeout = 5;
  // abusers (each bounded so the benchmark cannot take the machine down)
  std::string abuser_address = "127.0.0.2";  // their source address; ordinary clients use 127.0.0.1
  int flood_connections = 2;
  double flood_mb = 200;               // header bytes per flood connection, at most
  double flood_mb_per_s = 50;          // per connection
  int slowloris_connections = 64;
  double slowloris_interval = 1;       // one byte per connection per interval
  int disconnect_clients = 4;
  double disconnect_after = 0.5;       // seconds from sending the edit to hanging up
  double disconnect_pause = 0.5;       // between one hung-up edit and the next, per client
  double huge_body_gib = 10;           // the Content-Length declared
  double huge_body_mb = 2048;          // bytes actually sent per connection, at most
  double huge_body_mb_per_s = 200;
  // safety and output
  double rss_cap_mb = 4096;            // a phase is aborted when the server's RSS passes this
  double rss_interval = 0.5;
  std::string report_path, rss_series_path, label;
};

[[noreturn]] void usage(const std::string& problem);
Options parse_options(int argc, char** argv);
std::string read_file(const std::string& path);

}  // namespace abuse
