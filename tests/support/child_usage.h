// Runs a piece of code in a forked child and measures it there: wall time and how far its peak
// resident memory rose above where it started, so a test can bound what hostile input costs
// without the test process's own memory (LibTorch, other tests) in the figure.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>

namespace flashps::test {

struct ChildUsage {
  bool exited = false;     // the child finished normally (no signal, no OOM kill)
  std::string error;       // what() of the exception the body threw; empty when none
  double seconds = 0;      // wall time of the body
  long peak_growth_kb = 0; // peak RSS during the body minus RSS before it
};

inline long proc_status_kb(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field, 0) == 0) return std::stol(line.substr(std::strlen(field)));
  }
  return -1;
}

// The child resets its peak RSS (/proc/self/clear_refs, "5") before the body, so the peak it
// reports is the body's own.
inline ChildUsage run_in_child(const std::function<void()>& body) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) throw std::runtime_error("run_in_child: pipe failed");
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(pipe_fds[0]);
    std::ofstream("/proc/self/clear_refs") << "5";
    const long before = proc_status_kb("VmRSS:");
    std::string error;
    const auto start = std::chrono::steady_clock::now();
    try {
      body();
    } catch (const std::exception& thrown) {
      error = thrown.what();
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const long growth = proc_status_kb("VmHWM:") - before;
    const std::string report = std::to_string(seconds) + "\n" + std::to_string(growth) + "\n" + error;
    if (::write(pipe_fds[1], report.data(), report.size()) < 0) ::_exit(2);
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::string report;
  char buffer[4096];
  ssize_t got = 0;
  while ((got = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0) report.append(buffer, static_cast<size_t>(got));
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ChildUsage usage;
  usage.exited = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  const size_t first = report.find('\n'), second = first == std::string::npos ? first : report.find('\n', first + 1);
  if (!usage.exited || second == std::string::npos) return usage;
  usage.seconds = std::stod(report.substr(0, first));
  usage.peak_growth_kb = std::stol(report.substr(first + 1, second - first - 1));
  usage.error = report.substr(second + 1);
  return usage;
}

}  // namespace flashps::test
