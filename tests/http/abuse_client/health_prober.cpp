#include "health_prober.h"

#include "edit_requests.h"
#include "tally.h"

namespace abuse {

json probe_health(const Options& options, const std::atomic<bool>& stop) {
  Tally tally;
  while (!stop.load()) {
    const auto started = Clock::now();
    auto client = make_client(options, options.health_timeout, options.health_timeout);
    const std::string outcome = outcome_of(client->Get("/healthz"), 200);
    tally.add(outcome, seconds_since(started));
    sleep_unless(stop, options.health_interval - seconds_since(started));
  }
  const auto outcomes = tally.outcomes();
  int64_t probes = 0;
  for (const auto& entry : outcomes) probes += entry.second;
  return {{"probes", probes}, {"ok", tally.count("ok")}, {"failures", tally.errors()},
          {"latency", latency_summary(tally.seconds_of())}};
}

}  // namespace abuse
