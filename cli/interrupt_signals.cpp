#include "interrupt_signals.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>

namespace flashps::cli {
namespace {

// Lock-free, so reading and writing it is async-signal-safe (the handler may run on any thread).
std::atomic<int> requested{0};
std::atomic<const char*> interrupt_message{""};
static_assert(std::atomic<int>::is_always_lock_free);

constexpr int kSignals[] = {SIGINT, SIGTERM};
struct sigaction previous[2];
bool installed[2] = {false, false};

void on_interrupt(int number) {
  int expected = 0;
  if (!requested.compare_exchange_strong(expected, number)) {
    // The second signal: the default action (the process ends with 128 + number, at once).
    ::signal(number, SIG_DFL);
    ::raise(number);
    return;
  }
  const char* message = interrupt_message.load();
  size_t length = 0;
  while (message[length] != '\0') ++length;  // strlen is not on the async-signal-safe list
  [[maybe_unused]] const ssize_t written = ::write(STDERR_FILENO, message, length);
}

}  // namespace

InterruptSignals::InterruptSignals(const char* message) {
  requested = 0;
  interrupt_message = message;
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int i = 0; i < 2; ++i) {
    if (::sigaction(kSignals[i], nullptr, &previous[i]) != 0 || previous[i].sa_handler == SIG_IGN) continue;
    installed[i] = ::sigaction(kSignals[i], &action, nullptr) == 0;
  }
}

InterruptSignals::~InterruptSignals() {
  for (int i = 0; i < 2; ++i)
    if (installed[i]) {
      ::sigaction(kSignals[i], &previous[i], nullptr);
      installed[i] = false;
    }
}

int InterruptSignals::requested_signal() { return requested.load(); }

}  // namespace flashps::cli
