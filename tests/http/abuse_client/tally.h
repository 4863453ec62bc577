// Outcomes and latencies gathered by many threads, summarised as counts and percentiles.
#pragma once
#include <algorithm>
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
    seconds_[outcome].push_back(seconds);
  }
  // The durations of the requests that ended in one of `outcomes` (all of them when empty).
  std::vector<double> seconds_of(const std::vector<std::string>& outcomes = {}) const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<double> all;
    for (const auto& [outcome, seconds] : seconds_)
      if (outcomes.empty() || std::find(outcomes.begin(), outcomes.end(), outcome) != outcomes.end())
        all.insert(all.end(), seconds.begin(), seconds.end());
    return all;
  }
  std::map<std::string, int64_t> outcomes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::map<std::string, int64_t> counts;
    for (const auto& [outcome, seconds] : seconds_) counts[outcome] = int64_t(seconds.size());
    return counts;
  }
  int64_t count(const std::string& outcome) const { return int64_t(seconds_of({outcome}).size()); }
  // The outcomes other than "ok", as {"kind": count}.
  json errors() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::vector<double>> seconds_;
};

}  // namespace abuse
