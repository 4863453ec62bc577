#include "ordinary_clients.h"

#include <random>

namespace abuse {

static double seconds_until(Clock::time_point when) { return std::chrono::duration<double>(when - Clock::now()).count(); }

static void client_thread(const Options& options, const Media& media, int number, Clock::time_point window_end,
                          Clock::time_point hard_end, const std::atomic<bool>& abort, Tally& tally) {
  std::mt19937 random(uint32_t(1000 + number));
  while (!abort.load() && Clock::now() < window_end) {
    const auto started = Clock::now();
    const int seed = int(random() % 1000000);
    // The client waits as long as the request timeout allows, but not past the phase's hard end.
    const double patience = std::min(options.request_timeout, seconds_until(hard_end));
    std::string outcome;
    if (options.route == "openai") {
      auto client = make_client(options, std::min(10.0, patience), patience);
      outcome = outcome_of(post_openai_edit(*client, media, options.steps, seed), 200);
    } else {
      outcome = native_edit(options, media, seed, started + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(patience)));
    }
    if (outcome != "ok" && outcome.compare(0, 10, "transport_") == 0 && seconds_until(hard_end) < 0.5)
      outcome = "unanswered_at_end";
    tally.add(outcome, seconds_since(started));
    // A refusal (429, 503) is answered at once: a short pause keeps a refused client from spinning.
    if (outcome != "ok") sleep_seconds(0.2);
  }
}

void run_ordinary_clients(const Options& options, const Media& media, Clock::time_point window_end,
                          Clock::time_point hard_end, const std::atomic<bool>& abort, Tally& tally) {
  std::vector<std::thread> threads;
  for (int i = 0; i < options.clients; ++i)
    threads.emplace_back([&, i] { client_thread(options, media, i, window_end, hard_end, abort, tally); });
  for (std::thread& thread : threads) thread.join();
}

}  // namespace abuse
