#include "http/server_metrics.h"

#include <cstdio>

namespace flashps::http {
namespace {

std::string number(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

void metric(std::string& out, const std::string& name, const std::string& type, const std::string& help) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  size_t bucket = 0;
  while (bucket < bounds_.size() && value > bounds_[bucket]) ++bucket;
  std::lock_guard<std::mutex> lock(mutex_);
  ++counts_[bucket];
  sum_ += value;
  ++count_;
}

void Histogram::write(std::string& out, const std::string& name, const std::string& help) const {
  metric(out, name, "histogram", help);
  std::lock_guard<std::mutex> lock(mutex_);
  int64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    out += name + "_bucket{le=\"" + number(bounds_[i]) + "\"} " + std::to_string(cumulative) + "\n";
  }
  out += name + "_bucket{le=\"+Inf\"} " + std::to_string(count_) + "\n";
  out += name + "_sum " + number(sum_) + "\n";
  out += name + "_count " + std::to_string(count_) + "\n";
}

ServerMetrics::ServerMetrics()
    : step_seconds_({0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}),
      edit_seconds_({0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 60, 120, 300}) {}

void ServerMetrics::count_http(int status) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++http_by_status_[status];
}

void ServerMetrics::count_outcome(const std::string& outcome) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++outcomes_[outcome];
}

void ServerMetrics::count_cache(bool hit, int64_t bytes_loaded) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++(hit ? cache_hits_ : cache_misses_);
  cache_bytes_ += bytes_loaded;
}

int64_t ServerMetrics::http_requests() const {
  std::lock_guard<std::mutex> lock(mutex_);
  int64_t total = 0;
  for (const auto& [status, count] : http_by_status_) total += count;
  return total;
}

int64_t ServerMetrics::outcome(const std::string& outcome) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto found = outcomes_.find(outcome);
  return found == outcomes_.end() ? 0 : found->second;
}

std::string ServerMetrics::prometheus(const sdk::EngineCounters& engine, bool ready) const {
  std::string out;
  metric(out, "flashps_ready", "gauge", "1 when the model is loaded and the server takes edits");
  out += "flashps_ready " + std::to_string(ready ? 1 : 0) + "\n";
  metric(out, "flashps_queue_depth", "gauge", "Edits submitted and not yet denoising");
  out += "flashps_queue_depth " + std::to_string(queued.load()) + "\n";
  metric(out, "flashps_running_batch_size", "gauge", "Edits denoising now, all workers");
  out += "flashps_running_batch_size " + std::to_string(running.load()) + "\n";
  metric(out, "flashps_http_connections", "gauge", "Open HTTP connections");
  out += "flashps_http_connections " + std::to_string(connections.load()) + "\n";
  metric(out, "flashps_edits_cancelled_client_gone_total", "counter",
         "Edits and template captures cancelled because the client waiting for the answer disconnected");
  out += "flashps_edits_cancelled_client_gone_total " + std::to_string(cancelled_client_gone.load()) + "\n";
  metric(out, "flashps_template_captures_running", "gauge", "POST /v1/templates capturing a template now");
  out += "flashps_template_captures_running " + std::to_string(captures_running.load()) + "\n";
  metric(out, "flashps_http_requests_in_progress", "gauge",
         "Requests handed to a worker and not yet answered (those waiting for a free worker included)");
  out += "flashps_http_requests_in_progress " + std::to_string(requests_in_progress.load()) + "\n";
  metric(out, "flashps_workers", "gauge", "Engine workers (devices)");
  out += "flashps_workers " + std::to_string(engine.workers) + "\n";
  metric(out, "flashps_engine_steps_total", "counter", "Batched denoising steps run");
  out += "flashps_engine_steps_total " + std::to_string(engine.steps) + "\n";
  {
    std::lock_guard<std::mutex> lock(mutex_);
    metric(out, "flashps_edits_total", "counter", "Edits by outcome");
    for (const char* outcome : {"done", "failed", "cancelled", "deadline_exceeded", "rejected"}) {
      const auto found = outcomes_.find(outcome);
      out += std::string("flashps_edits_total{outcome=\"") + outcome + "\"} " +
             std::to_string(found == outcomes_.end() ? 0 : found->second) + "\n";
    }
    metric(out, "flashps_http_requests_total", "counter", "HTTP requests answered, by status code");
    for (const auto& [status, count] : http_by_status_)
      out += "flashps_http_requests_total{code=\"" + std::to_string(status) + "\"} " + std::to_string(count) + "\n";
    metric(out, "flashps_cache_hits_total", "counter", "Finished edits that reused a registered template");
    out += "flashps_cache_hits_total " + std::to_string(cache_hits_) + "\n";
    metric(out, "flashps_cache_misses_total", "counter", "Finished edits computed without a template");
    out += "flashps_cache_misses_total " + std::to_string(cache_misses_) + "\n";
    metric(out, "flashps_cache_bytes_loaded_total", "counter", "Activation bytes read from the store by edits");
    out += "flashps_cache_bytes_loaded_total " + std::to_string(cache_bytes_) + "\n";
  }
  step_seconds_.write(out, "flashps_step_seconds", "Seconds per denoising step as each edit saw it (batched)");
  edit_seconds_.write(out, "flashps_edit_seconds", "Seconds from submission to the result, finished edits");
  return out;
}

}  // namespace flashps::http
