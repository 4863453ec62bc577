// The server's listening socket: one it binds itself (`--listen`), or one it is handed already
// listening (systemd's socket activation passes it as fd 3). Either way the server learns the
// address it really listens on, which decides whether API keys are required.
#pragma once
#include "http/listen_address.h"

namespace flashps::http {

struct ListeningSocket {
  int fd = -1;
  ListenAddress address;  // as bound: the port is the real one (also for port 0)
};

// Binds `address` and listens. Throws sdk::Error(IO_ERROR) naming the address when it cannot.
ListeningSocket listen_on(const ListenAddress& address);

// Takes over `fd`, which must be a TCP socket (IPv4 or IPv6) that is bound and listening; makes it
// nonblocking and close-on-exec. Throws sdk::Error(INVALID_ARGUMENT) naming what the fd is instead.
ListeningSocket adopt_listening_socket(int fd);

}  // namespace flashps::http
