// Outcomes and latencies gathered by many threads, summarised as counts and percentiles.
#pragma once
#include <mutex>

#include "abuse.h"

namespace abuse {

// The p-quantile (0..1) by the nearest-rank method; 0 for no values.
double percentile(std::vector<double> values, double p);
// {"count", "p50", "p95", "max"} of the values (seconds).
json latency_summary(const std::vector<double>& values);

class Tally {
 public:
  // One ended request: its outcome ("ok", or an error kind) and how long it took.
  void add(const std::string& outcome, double seconds) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++outcomes_[outcome];
    (outcome == "ok" ? ok_seconds_ : failed_seconds_).push_back(seconds);
  }
  std::vector<double> ok_seconds() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return ok_seconds_;
  }
  std::vector<double> all_seconds() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<double> all = ok_seconds_;
    all.insert(all.end(), failed_seconds_.begin(), failed_seconds_.end());
    return all;
  }
  std::map<std::string, int64_t> outcomes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return outcomes_;
  }
  int64_t count(const std::string& outcome) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = outcomes_.find(outcome);
    return found == outcomes_.end() ? 0 : found->second;
  }
  // The outcomes other than "ok", as {"kind": count}.
  json errors() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, int64_t> outcomes_;
  std::vector<double> ok_seconds_, failed_seconds_;
};

}  // namespace abuse
