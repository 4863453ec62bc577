#include "serve_tools/latency_summary.h"

#include <algorithm>
#include <cmath>

#include "core/diagnostics/error.h"

namespace flashps::serve {

double percentile(std::vector<double> values, double fraction) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::clamp(fraction, 0.0, 1.0) * double(values.size() - 1);
  const size_t low = static_cast<size_t>(std::floor(rank));
  const size_t high = std::min(low + 1, values.size() - 1);
  return values[low] + (rank - double(low)) * (values[high] - values[low]);
}

LatencySummary summarize_latencies(const std::vector<double>& latencies, const std::vector<double>& queueings,
                                   double duration, double slo_seconds) {
  LatencySummary summary;
  summary.completed = static_cast<int>(latencies.size());
  if (latencies.empty()) return summary;
  for (double latency : latencies) summary.mean += latency / double(latencies.size());
  summary.p50 = percentile(latencies, 0.50);
  summary.p95 = percentile(latencies, 0.95);
  summary.p99 = percentile(latencies, 0.99);
  for (double queueing : queueings) summary.mean_queueing += queueing / double(std::max<size_t>(1, queueings.size()));
  summary.p95_queueing = percentile(queueings, 0.95);
  const int met = static_cast<int>(std::count_if(latencies.begin(), latencies.end(),
                                                 [&](double latency) { return latency <= slo_seconds; }));
  summary.slo_attainment = double(met) / double(latencies.size());
  if (duration > 0) {
    summary.throughput = double(latencies.size()) / duration;
    summary.goodput = double(met) / duration;
  }
  return summary;
}

double tail_share_from_largest(const std::vector<double>& latencies, const std::vector<double>& works, double tail,
                               double largest) {
  if (latencies.size() != works.size())
    throw Error("tail share: " + std::to_string(latencies.size()) + " latencies for " + std::to_string(works.size()) +
                " requests");
  const double slow_from = percentile(latencies, tail);
  const double large_from = percentile(works, 1.0 - largest);
  int slow = 0, slow_and_large = 0;
  for (size_t i = 0; i < latencies.size(); ++i) {
    if (latencies[i] < slow_from) continue;
    ++slow;
    slow_and_large += works[i] >= large_from;
  }
  return slow ? double(slow_and_large) / double(slow) : 0.0;
}

}  // namespace flashps::serve
