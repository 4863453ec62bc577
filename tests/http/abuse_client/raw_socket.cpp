#include "raw_socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace abuse {

int connect_loopback(const std::string& source, int port, double send_timeout) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  timeval timeout{};
  timeout.tv_sec = time_t(send_timeout);
  timeout.tv_usec = suseconds_t((send_timeout - double(timeout.tv_sec)) * 1e6);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  sockaddr_in from{};
  from.sin_family = AF_INET;
  if (::inet_pton(AF_INET, source.c_str(), &from.sin_addr) != 1 ||
      ::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0) {
    ::close(fd);
    return -1;
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(uint16_t(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

Sent send_bytes(int fd, const char* data, size_t size, size_t* sent) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::send(fd, data + done, size - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += size_t(n);
      *sent += size_t(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Sent::timed_out;
    return Sent::closed;
  }
  return Sent::all;
}

int read_status(int fd, double seconds) {
  pollfd waiting{fd, POLLIN, 0};
  if (::poll(&waiting, 1, int(seconds * 1000)) <= 0) return -1;
  char buffer[512];
  const ssize_t n = ::recv(fd, buffer, sizeof buffer - 1, 0);
  if (n <= 0) return 0;
  buffer[n] = '\0';
  // "HTTP/1.1 431 ..." (a partial first packet without the code counts as no answer)
  const std::string line(buffer, size_t(n));
  if (line.compare(0, 5, "HTTP/") != 0) return 0;
  const size_t space = line.find(' ');
  return space == std::string::npos ? 0 : std::atoi(line.c_str() + space + 1);
}

bool peer_spoke(int fd) {
  pollfd waiting{fd, POLLIN, 0};
  return ::poll(&waiting, 1, 0) > 0;
}

void close_socket(int fd, bool reset) {
  if (fd < 0) return;
  if (reset) {
    linger option{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, sizeof option);
  }
  ::close(fd);
}

}  // namespace abuse
