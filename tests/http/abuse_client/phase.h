// One phase of the benchmark: the ordinary clients and the health prober, beside one abuser (or
// none), for options.phase_seconds; then the server is left to settle and its counters are read.
#pragma once
#include "abuse.h"
#include "edit_requests.h"
#include "rss_sampler.h"

namespace abuse {

// The phase's JSON: ordinary clients, health, RSS, /metrics deltas, the abuser's summary, and
// "aborted" (null, or why the phase was cut short).
json run_phase(const std::string& name, const Options& options, const Media& media, RssSampler& rss);

}  // namespace abuse
