// Disconnecting clients: options.disconnect_clients threads, each sending an OpenAI edit with the
// key (real work) from options.abuser_address and hanging up options.disconnect_after seconds
// after sending it, mid-edit, as a client whose timeout fired does; then a pause, then again.
// Whether the server went on computing for nobody shows in the phase's /metrics counters (edits
// done that no ordinary client received, edits cancelled, engine steps).
#include <random>

#include "abusers.h"
#include "edit_requests.h"
#include "raw_socket.h"
#include "tally.h"

namespace abuse {

static std::string one_disconnecting_edit(const Options& options, const std::string& request) {
  const int fd = connect_loopback(options.abuser_address, options.port, 5);
  if (fd < 0) return "connect_failed";
  size_t sent = 0;
  const Sent result = send_bytes(fd, request.data(), request.size(), &sent);
  std::string outcome;
  if (result != Sent::all) {
    // The server answered (e.g. 503 too many connections) and closed before taking the whole request.
    const int status = read_status(fd, 0.5);
    outcome = status > 0 ? "answered_" + std::to_string(status) : "closed_while_sending";
  } else {
    const int status = read_status(fd, options.disconnect_after);
    outcome = status < 0 ? "hung_up" : status == 0 ? "closed_without_answer" : "answered_" + std::to_string(status);
  }
  close_socket(fd);
  return outcome;
}

json run_disconnecting_clients(const Options& options, const std::atomic<bool>& stop) {
  const Media media = load_media(options);
  Tally tally;  // hung_up: the client left while the server worked; answered_<status> otherwise
  std::vector<std::thread> threads;
  for (int i = 0; i < options.disconnect_clients; ++i)
    threads.emplace_back([&, i] {
      std::mt19937 random(uint32_t(5000 + i));
      while (!stop.load()) {
        const auto started = Clock::now();
        const std::string request = openai_edit_request(options, media, options.steps, int(random() % 1000000));
        const std::string outcome = one_disconnecting_edit(options, request);
        tally.add(outcome, seconds_since(started));
        sleep_unless(stop, options.disconnect_pause);
      }
    });
  for (std::thread& thread : threads) thread.join();
  return {{"requests", tally.seconds_of().size()}, {"outcomes", tally.outcomes()}};
}

}  // namespace abuse
