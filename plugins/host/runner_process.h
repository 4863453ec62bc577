// One flashps-plugin-runner process: started with its channel at fd 3 (and shared memory at
// fd 4), in its own process group so that killing it also kills anything the plugin started.
#ifndef FLASHPS_PLUGINS_RUNNER_PROCESS_H
#define FLASHPS_PLUGINS_RUNNER_PROCESS_H

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace flashps::plugins {

struct RunnerExit {
  bool signaled = false;
  int signal = 0;
  int code = 0;
  int64_t peak_resident_bytes = 0;
  std::string describe() const;  // "exited with status 3", "was killed by SIGSEGV (segmentation fault)"
};

class RunnerProcess {
 public:
  // Throws std::runtime_error when the process cannot be started.
  static RunnerProcess start(const std::string& runner, const std::vector<std::string>& arguments,
                             int shared_memory_fd);
  RunnerProcess() = default;
  ~RunnerProcess();  // kills and reaps a runner still running
  RunnerProcess(RunnerProcess&& other) noexcept;
  RunnerProcess& operator=(RunnerProcess&&) = delete;

  int channel() const { return channel_; }
  // Whole frame or false (the runner is gone).
  bool send(const std::string& frame);
  void kill();
  RunnerExit wait();

 private:
  pid_t pid_ = -1;
  int channel_ = -1;
  bool reaped_ = false;
};

}  // namespace flashps::plugins

#endif
