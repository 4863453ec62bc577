// Disconnecting clients: options.disconnect_clients threads, each sending an OpenAI edit (with the
// key, so it is real work) and hanging up options.disconnect_after seconds later, mid-edit, as a
// client whose timeout fired does; then a pause, then again. Whether the server went on computing
// for nobody shows in the phase's /metrics counters (edits done beyond the answered ordinary ones,
// edits cancelled, engine steps).
#include <mutex>
#include <random>

#include "abusers.h"
#include "edit_requests.h"
#include "tally.h"

namespace abuse {

json run_disconnecting_clients(const Options& options, const std::atomic<bool>& stop) {
  const Media media = load_media(options);
  Tally tally;  // "hung_up" when the read timed out: the client left while the server worked
  std::vector<std::thread> threads;
  for (int i = 0; i < options.disconnect_clients; ++i)
    threads.emplace_back([&, i] {
      std::mt19937 random(uint32_t(5000 + i));
      while (!stop.load()) {
        const auto started = Clock::now();
        auto client = make_client(options, 5, options.disconnect_after);
        std::string outcome = outcome_of(post_openai_edit(*client, media, options.steps, int(random() % 1000000)), 200);
        if (outcome == "transport_read") outcome = "hung_up";
        else if (outcome == "ok") outcome = "answered_before_hang_up";
        tally.add(outcome, seconds_since(started));
        client.reset();  // closes the connection
        sleep_unless(stop, options.disconnect_pause);
      }
    });
  for (std::thread& thread : threads) thread.join();
  return {{"requests", tally.seconds_of().size()}, {"outcomes", tally.outcomes()}};
}

}  // namespace abuse
