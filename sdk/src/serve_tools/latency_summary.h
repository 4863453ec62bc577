// Latency statistics of a serving run: mean and percentiles of end-to-end latency and queueing,
// throughput, and goodput under a latency SLO.
#pragma once
#include <vector>

namespace flashps::serve {

struct LatencySummary {
  int completed = 0;
  double mean = 0, p50 = 0, p95 = 0, p99 = 0;
  double mean_queueing = 0, p95_queueing = 0;
  double throughput = 0;  // completed requests per second of the run
  double goodput = 0;     // requests per second that met the SLO
  double slo_attainment = 0;
};

// Percentile by linear interpolation between closest ranks (numpy's default).
double percentile(std::vector<double> values, double fraction);

// latencies/queueings per completed request; `duration`: first arrival to last completion.
LatencySummary summarize_latencies(const std::vector<double>& latencies, const std::vector<double>& queueings,
                                   double duration, double slo_seconds);

// Which requests make the latency tail: of the requests at or above the `tail` percentile of
// latency (0.95: the slowest 5%), the share that are among the largest `largest` fraction by
// `works` (0.10: the largest tenth). Near 1, the tail is the big requests' own length, which no
// routing shortens; near 0, it is smaller requests slowed by others. Error if the sizes differ.
double tail_share_from_largest(const std::vector<double>& latencies, const std::vector<double>& works,
                               double tail = 0.95, double largest = 0.10);

}  // namespace flashps::serve
