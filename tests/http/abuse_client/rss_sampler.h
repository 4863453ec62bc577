// The server's resident memory, sampled from /proc/<pid>/status (VmRSS) on a thread of its own for
// the whole run: per-phase start, maximum and end, the cap that aborts a phase, and the series.
#pragma once
#include <mutex>

#include "abuse.h"

namespace abuse {

class RssSampler {
 public:
  explicit RssSampler(const Options& options);
  ~RssSampler();
  RssSampler(const RssSampler&) = delete;
  RssSampler& operator=(const RssSampler&) = delete;

  void begin_phase(const std::string& phase);
  // {"start_mb", "max_mb", "end_mb", "samples"} since begin_phase (null without a pid).
  json phase_summary() const;
  // The latest sample (MB; 0 without a pid).
  double current_mb() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_mb_;
  }
  // The server passed options.rss_cap_mb in this phase.
  bool over_cap() const { return over_cap_.load(); }
  // /proc/<pid> went away: the server exited.
  bool server_gone() const { return server_gone_.load(); }
  // "seconds<TAB>phase<TAB>rss_mb" lines, one per sample.
  void write_series(const std::string& path) const;

 private:
  void sample_forever();
  double read_rss_mb() const;  // -1 when the process is gone

  const Options& options_;
  const Clock::time_point start_ = Clock::now();
  std::atomic<bool> stop_{false}, over_cap_{false}, server_gone_{false};
  mutable std::mutex mutex_;  // guards everything below
  std::string phase_ = "start";
  double phase_start_mb_ = 0, phase_max_mb_ = 0, last_mb_ = 0;
  int phase_samples_ = 0;
  struct Sample {
    double seconds;
    std::string phase;
    double mb;
  };
  std::vector<Sample> series_;
  std::thread thread_;
};

}  // namespace abuse
