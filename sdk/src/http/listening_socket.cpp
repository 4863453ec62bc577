#include "http/listening_socket.h"

#include <flashps/flashps.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace flashps::http {
namespace {

// The address a socket is bound to; `family` receives its family (AF_UNSPEC when unknown).
ListenAddress bound_address(int fd, int* family) {
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  ListenAddress address;
  *family = ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) == 0 ? bound.ss_family : AF_UNSPEC;
  char text[INET6_ADDRSTRLEN] = "";
  if (*family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(bound);
    ::inet_ntop(AF_INET, &v4.sin_addr, text, sizeof text);
    address.port = ntohs(v4.sin_port);
  } else if (*family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(bound);
    ::inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof text);
    address.port = ntohs(v6.sin6_port);
  }
  address.host = text;
  return address;
}

}  // namespace

ListeningSocket listen_on(const ListenAddress& address) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  int fd = -1;
  if (::getaddrinfo(address.host.c_str(), std::to_string(address.port).c_str(), &hints, &found) == 0) {
    for (addrinfo* at = found; at && fd < 0; at = at->ai_next) {
      fd = ::socket(at->ai_family, at->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, at->ai_protocol);
      if (fd < 0) continue;
      // SO_REUSEADDR allows a quick restart; not SO_REUSEPORT, with which a second server on the
      // same port would start and silently take half the connections.
      int yes = 1;
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
      if (::bind(fd, at->ai_addr, at->ai_addrlen) != 0 || ::listen(fd, 1024) != 0) {
        ::close(fd);
        fd = -1;
      }
    }
    ::freeaddrinfo(found);
  }
  if (fd < 0)
    throw sdk::Error(FLASHPS_IO_ERROR, "cannot listen on " + address.text() +
                                           ": the address is in use or not this machine's (another server "
                                           "running? pick another --listen port)");
  ListeningSocket socket{fd, address};
  int family = AF_UNSPEC;
  socket.address.port = bound_address(fd, &family).port;  // the host as given ("localhost" stays)
  return socket;
}

ListeningSocket adopt_listening_socket(int fd) {
  const std::string name = "the listening socket (fd " + std::to_string(fd) + ")";
  int type = 0, accepting = 0;
  socklen_t length = sizeof type;
  if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) != 0)
    throw sdk::Error(FLASHPS_INVALID_ARGUMENT, name + " is not an open socket");
  length = sizeof accepting;
  ::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &length);
  int family = AF_UNSPEC;
  const ListenAddress address = bound_address(fd, &family);
  if (family != AF_INET && family != AF_INET6)
    throw sdk::Error(FLASHPS_INVALID_ARGUMENT, name + " is not an IPv4 or IPv6 socket (a unix socket? use "
                                                      "ListenStream=host:port)");
  if (type != SOCK_STREAM || !accepting)
    throw sdk::Error(FLASHPS_INVALID_ARGUMENT, name + " is not a TCP socket that listens (ListenStream=, with "
                                                      "Accept=no)");
  // systemd hands it over blocking and inheritable; the connection loop needs nonblocking accepts.
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0 || ::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0)
    throw sdk::Error(FLASHPS_IO_ERROR, name + ": cannot make it nonblocking");
  return {fd, address};
}

}  // namespace flashps::http
