#include "socket_activation.h"

#include <flashps/flashps.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace flashps::cli {
namespace {

constexpr int kFirstPassedFd = 3;  // SD_LISTEN_FDS_START

// A whole decimal number, or -1.
long whole_number(const char* text) {
  if (!text || !*text) return -1;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  return *end == '\0' && value >= 0 ? value : -1;
}

}  // namespace

int inherited_listen_fd() {
  const long pid = whole_number(std::getenv("LISTEN_PID"));
  const long count = whole_number(std::getenv("LISTEN_FDS"));
  const std::string fds_text = std::getenv("LISTEN_FDS") ? std::getenv("LISTEN_FDS") : "";
  ::unsetenv("LISTEN_PID");
  ::unsetenv("LISTEN_FDS");
  ::unsetenv("LISTEN_FDNAMES");
  if (pid != static_cast<long>(::getpid())) return 0;  // not set, or meant for another process
  if (count != 1)
    throw sdk::Error(FLASHPS_INVALID_ARGUMENT,
                     "LISTEN_FDS is '" + fds_text +
                         "': `flashps serve` takes exactly one socket from systemd (one ListenStream= in "
                         "flashps.socket)");
  return kFirstPassedFd;
}

std::string bound_address_text(int fd) {
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) != 0) return "fd " + std::to_string(fd);
  char text[INET6_ADDRSTRLEN] = "";
  if (bound.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(bound);
    ::inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof text);
    return "[" + std::string(text) + "]:" + std::to_string(ntohs(v6.sin6_port));
  }
  const auto& v4 = reinterpret_cast<const sockaddr_in&>(bound);
  ::inet_ntop(AF_INET, &v4.sin_addr, text, sizeof text);
  return std::string(text) + ":" + std::to_string(ntohs(v4.sin_port));
}

}  // namespace flashps::cli
