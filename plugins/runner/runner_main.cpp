// flashps-plugin-runner: hosts one plugin in its own process for a FlashPS host, so that a plugin
// that crashes, hangs or allocates without bound takes down only this process.
//   flashps-plugin-runner --describe PLUGIN.so    sends the plugin's descriptor
//   flashps-plugin-runner --run                   reads a run message, runs, sends the results
// Both talk over fd 3 (plugins/core/runner_protocol.h); --run reads and writes pixels in the
// shared memory at fd 4. --memory-limit BYTES caps the heap (RLIMIT_DATA). Not for people to run.
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <thread>

#include "descriptor_json.h"
#include "plugin_library.h"
#include "runner_channel.h"
#include "runner_run.h"

namespace fp = flashps::plugins;

// Read by AddressSanitizer when the runner is built with it (and unused otherwise): a plugin's
// crash must stay a signal the host can report, and what a plugin leaks is its own business; the
// host is the one checked for leaks.
extern "C" __attribute__((visibility("default"), used)) const char* __asan_default_options() {
  return "handle_segv=0:handle_sigbus=0:handle_abort=0:detect_leaks=0";
}

namespace {

fp::RunnerChannel channel;
std::string out_of_memory_frame;  // encoded up front: no allocation is possible when it is needed

void report_out_of_memory() {
  channel.send_frame(out_of_memory_frame);
  _exit(3);
}

int describe(const std::string& path) {
  try {
    const flashps_plugin_descriptor* descriptor = fp::open_plugin_library(path);
    channel.send({{"type", "descriptor"}, {"plugin", fp::descriptor_to_json(descriptor)}});
  } catch (const std::exception& error) {
    channel.send({{"type", "finished"}, {"status", "error"}, {"message", error.what()}});
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode, plugin_path;
  long long memory_limit = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    if (argument == "--describe" && i + 1 < argc) {
      mode = "describe";
      plugin_path = argv[++i];
    } else if (argument == "--run") {
      mode = "run";
    } else if (argument == "--memory-limit" && i + 1 < argc) {
      memory_limit = std::atoll(argv[++i]);
    } else {
      std::fprintf(stderr, "flashps-plugin-runner: unknown argument %s (it is started by FlashPS hosts)\n", argv[i]);
      return 2;
    }
  }
  if (mode.empty()) {
    std::fprintf(stderr, "usage: flashps-plugin-runner --describe PLUGIN.so | --run [--memory-limit BYTES]\n");
    return 2;
  }
  // A plugin's printf must not reach whatever the host's stdout is (a pipe in a script).
  dup2(STDERR_FILENO, STDOUT_FILENO);
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer reserves terabytes of shadow memory, more than any limit: a sanitizer build
  // of the runner (for testing the host) runs without one.
  memory_limit = 0;
#endif
  if (memory_limit > 0) {
    // Soft and hard alike: the plugin cannot raise it again.
    const rlimit limit{rlim_t(memory_limit), rlim_t(memory_limit)};
    if (setrlimit(RLIMIT_DATA, &limit) != 0) std::perror("flashps-plugin-runner: setrlimit");
  }
  out_of_memory_frame = fp::protocol::encode(
      {{"type", "finished"}, {"status", "out_of_memory"}, {"message", "it ran out of memory"}});
  std::set_new_handler(report_out_of_memory);
  if (mode == "describe") return describe(plugin_path);
  return fp::run_from_host(channel);
}
