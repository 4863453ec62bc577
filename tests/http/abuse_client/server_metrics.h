// The server's /metrics (Prometheus text) as numbers, and how its counters moved over a phase.
#pragma once
#include <optional>

#include "abuse.h"

namespace abuse {

using Metrics = std::map<std::string, double>;

// nullopt when /metrics did not answer 200 within `timeout` seconds.
std::optional<Metrics> read_metrics(const Options& options, double timeout);

// Waits (up to options.settle_seconds) for no edit queued or running: the work a phase left behind
// is then counted in that phase. Returns {"settled": bool, "seconds": s} and the last reading.
json settle(const Options& options, std::optional<Metrics>* last);

// What moved between two readings: edits by outcome, engine steps, and (in client_gone_counters)
// every counter whose name mentions a disconnect or a client gone (whatever a server calls it).
json metrics_delta(const std::optional<Metrics>& before, const std::optional<Metrics>& after);

}  // namespace abuse
