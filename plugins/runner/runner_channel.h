// The runner's end of its channel to the host (fd 3): whole frames written under a lock (progress
// comes from the plugin's thread, while another thread reads the host's cancel).
#ifndef FLASHPS_PLUGINS_RUNNER_CHANNEL_H
#define FLASHPS_PLUGINS_RUNNER_CHANNEL_H

#include <unistd.h>

#include <cerrno>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "runner_protocol.h"

namespace flashps::plugins {

class RunnerChannel {
 public:
  // False when the host is gone (the runner then stops).
  bool send(const nlohmann::json& message) { return send_frame(protocol::encode(message)); }
  bool send_frame(const std::string& frame) {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t sent = 0;
    while (sent < frame.size()) {
      const ssize_t written = ::write(protocol::kChannelFd, frame.data() + sent, frame.size() - sent);
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) return false;
      sent += size_t(written);
    }
    return true;
  }

 private:
  std::mutex mutex_;
};

}  // namespace flashps::plugins

#endif
