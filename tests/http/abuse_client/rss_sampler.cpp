#include "rss_sampler.h"

#include <cstdio>
#include <fstream>
#include <sstream>

namespace abuse {

RssSampler::RssSampler(const Options& options) : options_(options) {
  if (options_.server_pid > 0) {
    last_mb_ = std::max(0.0, read_rss_mb());
    thread_ = std::thread([this] { sample_forever(); });
  }
}

RssSampler::~RssSampler() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

double RssSampler::read_rss_mb() const {
  std::ifstream status("/proc/" + std::to_string(options_.server_pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.compare(0, 6, "VmRSS:") == 0) return std::stod(line.substr(6)) / 1024.0;  // "VmRSS:  223360 kB"
  return -1;
}

void RssSampler::sample_forever() {
  while (!stop_.load()) {
    const double mb = read_rss_mb();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (mb < 0) {
        server_gone_ = true;
      } else {
        last_mb_ = mb;
        phase_max_mb_ = std::max(phase_max_mb_, mb);
        ++phase_samples_;
        series_.push_back({seconds_since(start_), phase_, mb});
        if (mb > options_.rss_cap_mb) over_cap_ = true;
      }
    }
    sleep_unless(stop_, options_.rss_interval);
  }
}

void RssSampler::begin_phase(const std::string& phase) {
  std::lock_guard<std::mutex> lock(mutex_);
  phase_ = phase;
  phase_start_mb_ = phase_max_mb_ = last_mb_;
  phase_samples_ = 0;
  over_cap_ = false;
}

json RssSampler::phase_summary() const {
  if (options_.server_pid <= 0) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  return {{"start_mb", phase_start_mb_}, {"max_mb", phase_max_mb_}, {"end_mb", last_mb_}, {"samples", phase_samples_}};
}

void RssSampler::write_series(const std::string& path) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::ofstream out(path);
  out << "seconds\tphase\trss_mb\n";
  char line[160];
  for (const Sample& sample : series_) {
    std::snprintf(line, sizeof line, "%.2f\t%s\t%.1f\n", sample.seconds, sample.phase.c_str(), sample.mb);
    out << line;
  }
}

}  // namespace abuse
