#include "runner_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

extern char** environ;

namespace flashps::plugins {
namespace {

// A close-on-exec copy at a high number, so that dup2 to 3 or 4 in the child always copies
// (posix_spawn's dup2 onto the same number would keep close-on-exec on some glibc versions).
int high_copy(int fd) {
  const int copy = fcntl(fd, F_DUPFD_CLOEXEC, 10);
  if (copy < 0) throw std::runtime_error(std::string("cannot start the plugin runner: ") + std::strerror(errno));
  return copy;
}

}  // namespace

std::string RunnerExit::describe() const {
  if (!signaled) return "exited with status " + std::to_string(code);
  const char* name = sigabbrev_np(signal);
  return std::string("was killed by SIG") + (name ? name : std::to_string(signal).c_str()) + " (" + strsignal(signal) + ")";
}

RunnerProcess RunnerProcess::start(const std::string& runner, const std::vector<std::string>& arguments,
                                   int shared_memory_fd) {
  int ends[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0)
    throw std::runtime_error(std::string("cannot start the plugin runner: socketpair: ") + std::strerror(errno));
  RunnerProcess process;
  process.channel_ = ends[0];
  int child_channel = -1, child_memory = -1;
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attributes);
  try {
    child_channel = high_copy(ends[1]);
    ::close(ends[1]);
    posix_spawn_file_actions_adddup2(&actions, child_channel, 3);
    if (shared_memory_fd >= 0) {
      child_memory = high_copy(shared_memory_fd);
      posix_spawn_file_actions_adddup2(&actions, child_memory, 4);
    }
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
    posix_spawnattr_setpgroup(&attributes, 0);
    sigset_t empty;
    sigemptyset(&empty);
    posix_spawnattr_setsigmask(&attributes, &empty);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(runner.c_str()));
    for (const std::string& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
    argv.push_back(nullptr);
    const int failed = posix_spawn(&process.pid_, runner.c_str(), &actions, &attributes, argv.data(), environ);
    if (failed != 0) {
      process.pid_ = -1;
      throw std::runtime_error("cannot start the plugin runner " + runner + ": " + std::strerror(failed));
    }
  } catch (...) {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (child_channel >= 0) ::close(child_channel);
    if (child_memory >= 0) ::close(child_memory);
    throw;
  }
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(child_channel);
  if (child_memory >= 0) ::close(child_memory);
  return process;
}

RunnerProcess::RunnerProcess(RunnerProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), channel_(std::exchange(other.channel_, -1)), reaped_(other.reaped_) {}

RunnerProcess::~RunnerProcess() {
  if (pid_ > 0 && !reaped_) {
    kill();
    wait();
  }
  if (channel_ >= 0) ::close(channel_);
}

bool RunnerProcess::send(const std::string& frame) {
  size_t sent = 0;
  while (sent < frame.size()) {
    // MSG_NOSIGNAL: a runner that died must not kill the host with SIGPIPE.
    const ssize_t written = ::send(channel_, frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    sent += size_t(written);
  }
  return true;
}

void RunnerProcess::kill() {
  if (pid_ > 0 && !reaped_) {
    ::kill(-pid_, SIGKILL);  // the group: whatever the plugin started too
    ::kill(pid_, SIGKILL);
  }
}

RunnerExit RunnerProcess::wait() {
  RunnerExit exit;
  if (pid_ <= 0 || reaped_) return exit;
  int status = 0;
  rusage usage{};
  while (wait4(pid_, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  ::kill(-pid_, SIGKILL);  // anything left in its group
  exit.signaled = WIFSIGNALED(status);
  exit.signal = exit.signaled ? WTERMSIG(status) : 0;
  exit.code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
  exit.peak_resident_bytes = int64_t(usage.ru_maxrss) * 1024;
  return exit;
}

}  // namespace flashps::plugins
