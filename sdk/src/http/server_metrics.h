// What /metrics reports, in Prometheus' text format: queue depth, running batch size, requests by
// outcome, step and edit latency histograms, cache hits/misses and bytes loaded, HTTP answers by
// status. Updated by the job table (engine events) and the server (each answer).
#pragma once
#include <flashps/flashps.hpp>

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace flashps::http {

class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void observe(double value);
  // name_bucket{le=...}, name_sum, name_count with HELP and TYPE lines.
  void write(std::string& out, const std::string& name, const std::string& help) const;

 private:
  std::vector<double> bounds_;
  mutable std::mutex mutex_;
  std::vector<int64_t> counts_;  // per bucket (not cumulative); the last is +Inf
  double sum_ = 0;
  int64_t count_ = 0;
};

class ServerMetrics {
 public:
  ServerMetrics();

  std::atomic<int> connections{0};
  std::atomic<int> queued{0};   // submitted, not yet denoising
  std::atomic<int> running{0};  // denoising now
  // Edits and template captures cancelled because the client that waited for their answer
  // disconnected.
  std::atomic<int64_t> cancelled_client_gone{0};
  std::atomic<int> captures_running{0};      // POST /v1/templates capturing now
  std::atomic<int> requests_in_progress{0};  // handed to a worker (or waiting for one), not yet answered

  void count_http(int status);
  // "done", "failed", "cancelled", "deadline_exceeded", "rejected"
  void count_outcome(const std::string& outcome);
  void observe_step(double seconds) { step_seconds_.observe(seconds); }
  void observe_edit(double seconds) { edit_seconds_.observe(seconds); }
  void count_cache(bool hit, int64_t bytes_loaded);

  int64_t http_requests() const;
  int64_t outcome(const std::string& outcome) const;
  // The text format (version 0.0.4).
  std::string prometheus(const sdk::EngineCounters& engine, bool ready) const;

 private:
  mutable std::mutex mutex_;
  std::map<int, int64_t> http_by_status_;
  std::map<std::string, int64_t> outcomes_;
  int64_t cache_hits_ = 0, cache_misses_ = 0, cache_bytes_ = 0;
  Histogram step_seconds_, edit_seconds_;
};

}  // namespace flashps::http
