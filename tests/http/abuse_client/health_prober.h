// GET /healthz every options.health_interval seconds until stopped, each on a new connection with
// options.health_timeout to connect and answer: how long health took to answer under the phase's load.
#pragma once
#include "abuse.h"

namespace abuse {

// {"probes", "ok", "failures": {kind: n}, "latency": {count, p50, p95, max}} (latency of every
// probe, failed ones included with the time they took to fail).
json probe_health(const Options& options, const std::atomic<bool>& stop);

}  // namespace abuse
