#include "phase.h"

#include <cstdio>
#include <future>

#include "abusers.h"
#include "health_prober.h"
#include "ordinary_clients.h"
#include "server_metrics.h"

namespace abuse {

static json run_abuser(const std::string& name, const Options& options, const std::atomic<bool>& stop) {
  if (name == "header_flood") return run_header_flood(options, stop);
  if (name == "slowloris") return run_slowloris(options, stop);
  if (name == "disconnect") return run_disconnecting_clients(options, stop);
  if (name == "huge_body") return run_huge_body(options, stop);
  return nullptr;  // "alone"
}

static Clock::time_point after(Clock::time_point start, double seconds) {
  return start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

json run_phase(const std::string& name, const Options& options, const Media& media, RssSampler& rss) {
  std::optional<Metrics> before;
  const json settled_before = settle(options, &before);
  rss.begin_phase(name);
  std::printf("phase %s: %.0f s, %d ordinary clients (%s, %d steps)%s\n", name.c_str(), options.phase_seconds,
              options.clients, options.route.c_str(), options.steps, name == "alone" ? "" : ", abuse running");
  std::fflush(stdout);

  std::atomic<bool> stop_abuse{false}, stop_health{false}, abort{false};
  auto abuser = std::async(std::launch::async, [&] { return run_abuser(name, options, stop_abuse); });
  if (name != "alone") sleep_seconds(1);  // the abuse is under way when the ordinary clients come
  auto health = std::async(std::launch::async, [&] { return probe_health(options, stop_health); });

  // The safety cap: a watcher stops the abuse and the phase when the server's RSS passes it.
  std::string aborted;
  std::atomic<bool> ordinary_done{false};
  std::thread watcher([&] {
    while (!ordinary_done.load()) {
      if (rss.over_cap() || rss.server_gone()) {
        aborted = rss.server_gone() ? "the server exited" : "server RSS passed --rss-cap-mb";
        abort = true;
        stop_abuse = true;
        return;
      }
      sleep_seconds(0.1);
    }
  });
  const auto start = Clock::now();
  Tally ordinary;
  run_ordinary_clients(options, media, after(start, options.phase_seconds),
                       after(start, options.phase_seconds + options.grace_seconds), abort, ordinary);
  const double elapsed = seconds_since(start);
  ordinary_done = true;
  watcher.join();
  stop_abuse = true;
  stop_health = true;
  const json abuse = abuser.get();
  const json health_summary = health.get();

  std::optional<Metrics> after_metrics;
  const json settled_after = settle(options, &after_metrics);
  const json moved = metrics_delta(before, after_metrics);
  const int64_t ok = ordinary.count("ok");
  json phase = {
      {"phase", name},
      {"aborted", aborted.empty() ? json(nullptr) : json(aborted)},
      {"ordinary",
       {{"requests", ordinary.seconds_of().size()},
        {"ok", ok},
        {"seconds", elapsed},
        {"throughput", elapsed > 0 ? double(ok) / elapsed : 0.0},
        {"latency", latency_summary(ordinary.seconds_of({"ok"}))},
        // A request still waiting when the phase ended counts with its wait so far (a lower bound):
        // a server that answers nobody must not show the latency of the few it answered.
        {"latency_with_unanswered", latency_summary(ordinary.seconds_of({"ok", "unanswered_at_end"}))},
        {"errors", ordinary.errors()}}},
      {"health", health_summary},
      {"rss", rss.phase_summary()},
      {"server", moved},
      {"settle_before", settled_before},
      {"settle_after", settled_after},
      {"abuse", abuse}};
  // Edits the server finished that no ordinary client received: work for clients that were gone.
  if (moved.is_object()) phase["server"]["edits_done_unanswered"] = moved["edits_done"].get<double>() - double(ok);
  std::printf("phase %s: %lld ok in %.1f s%s\n", name.c_str(), static_cast<long long>(ok), elapsed,
              aborted.empty() ? "" : (" (aborted: " + aborted + ")").c_str());
  std::fflush(stdout);
  return phase;
}

}  // namespace abuse
