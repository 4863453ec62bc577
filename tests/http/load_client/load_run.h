// The load client's shared state: arguments, request kinds, what each request and edit did, and
// the violations found. One Run per process, shared by the client threads.
#pragma once
#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace load_client {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

inline double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }
inline void sleep_seconds(double seconds) { std::this_thread::sleep_for(std::chrono::duration<double>(seconds)); }

// ---------------------------------------------------------------- arguments

struct Args {
  int port = 0;
  int requests = 500;
  int clients = 32;
  uint64_t seed = 1;
  std::string image, mask, alpha_mask, report;
  bool check_metrics = false;
  bool allow_draining = false;   // a SIGTERM may come: 503 draining is legal, and the exit after it
  bool server_may_die = false;   // a SIGKILL may come: transport errors end the run quietly
  double edit_timeout = 300;     // seconds an accepted edit may take to finish
  double retry_seconds = 60;     // how long a request keeps retrying 429 / 503 too_many_connections
  double poll_seconds = 0.15;    // status poll interval (jittered)
};

// Prints the problem and the usage, exits 2.
[[noreturn]] void usage(const std::string& problem);
Args parse_args(int argc, char** argv);
std::string read_file(const std::string& path);

// ---------------------------------------------------------------- the run's shared state

enum class Kind { plain, cancel, deadline, upload_disconnect, sse_disconnect, openai, openai_disconnect, count };
constexpr int kKinds = int(Kind::count);
inline const char* const kKindNames[kKinds] = {"plain",          "cancel", "deadline",         "upload_disconnect",
                                        "sse_disconnect", "openai", "openai_disconnect"};
constexpr int kKindWeights[kKinds] = {22, 16, 14, 10, 14, 14, 10};

struct Record {
  Kind kind = Kind::plain;
  std::vector<std::string> ids;  // the edits this request created and the client knows of
  std::string final_class;       // how the request ended (set exactly once)
  int ends = 0;
  double latency = 0;
  int retries_429 = 0, retries_503 = 0;
};

struct Edit {  // what has been observed of one edit id
  bool finished = false;
  std::string outcome;
  int step = -1;
  int observations = 0;
};

inline const std::set<std::string> kUnfinishedStatuses = {"queued", "preparing", "ready", "running", "finishing"};
inline const std::set<std::string> kOutcomes = {"done", "failed", "cancelled", "deadline_exceeded"};

struct Run {
  Args args;
  std::string image, mask, alpha_mask;
  std::string image_type;
  std::vector<Record> records;
  std::atomic<int> next{0};
  std::atomic<int> completed{0};
  std::atomic<bool> server_gone{false};
  std::atomic<bool> draining_seen{false};
  Clock::time_point start = Clock::now();

  std::mutex mutex;  // guards everything below
  std::vector<std::string> violations;
  std::map<std::string, Edit> edits;
  std::map<int, int64_t> statuses;  // HTTP statuses the client received
  int64_t seen_429 = 0, seen_503_connections = 0, transport_errors = 0;
  int64_t openai_timed_out = 0;  // openai_disconnect requests that hung up before an answer

  void violate(int number, const std::string& what) {
    std::lock_guard<std::mutex> lock(mutex);
    violations.push_back("request " + std::to_string(number) + " (" + kKindNames[int(records[size_t(number)].kind)] +
                         "): " + what);
    if (violations.size() <= 40) std::cerr << "VIOLATION: " << violations.back() << "\n";
  }
  void violate_run(const std::string& what) {
    std::lock_guard<std::mutex> lock(mutex);
    violations.push_back(what);
    std::cerr << "VIOLATION: " << what << "\n";
  }
  void count_status(int status) {
    std::lock_guard<std::mutex> lock(mutex);
    ++statuses[status];
  }
  void end(int number, const std::string& final_class, Clock::time_point started) {
    Record& record = records[size_t(number)];
    {
      std::lock_guard<std::mutex> lock(mutex);
      ++record.ends;
      if (record.ends == 1) {
        record.final_class = final_class;
        record.latency = seconds_since(started);
      }
    }
    if (record.ends != 1) violate(number, "ended " + std::to_string(record.ends) + " times (" + final_class + ")");
    const int done = ++completed;
    const int tenth = std::max(1, args.requests / 10);
    if (done % tenth == 0 || done == args.requests) {
      std::printf("progress: %d/%d requests ended, %.1f s\n", done, args.requests, seconds_since(start));
      std::fflush(stdout);
    }
  }
};

// The start of a body, printable, for messages.
std::string excerpt(const std::string& body);
// error.code of a JSON error body ("null", or "(no JSON error)").
std::string error_code(const std::string& body);
std::unique_ptr<httplib::Client> make_client(const Run& run, double read_timeout_seconds);

}  // namespace load_client
