// Ctrl+C (SIGINT) and SIGTERM during a long command: the first asks it to stop cleanly (the
// command polls requested_signal() from its SDK progress callback, which cancels at the next step
// boundary and still writes its results); a second ends the process at once, as users expect.
// The SDK installs no handlers of its own; these are the CLI's.
#pragma once

namespace flashps::cli {

// Installs the handlers for its lifetime and restores the previous ones after. A signal that was
// ignored when the program started (nohup, a background job of a non-interactive shell) stays
// ignored.
class InterruptSignals {
 public:
  // `message` is written to stderr when the first signal arrives (a string literal: it is kept).
  explicit InterruptSignals(
      const char* message =
          "\nflashps: interrupted: stopping at the next step, then writing the summary (again to quit at once)\n");
  ~InterruptSignals();
  InterruptSignals(const InterruptSignals&) = delete;
  InterruptSignals& operator=(const InterruptSignals&) = delete;

  // 0 until SIGINT or SIGTERM arrives, then that signal's number (the exit code is 128 + it).
  static int requested_signal();
};

}  // namespace flashps::cli
