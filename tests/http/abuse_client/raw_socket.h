// Plain TCP to the server on loopback, for the abusers that must misbehave below HTTP: send part of
// a request and see whether, and with what, the server answers or closes.
#pragma once
#include <cstddef>
#include <string>

namespace abuse {

// A blocking socket from `source` (a loopback address such as 127.0.0.2, so that a server's
// per-address limits tell the abusers from the ordinary clients) to 127.0.0.1:port; connecting and
// sending time out after `send_timeout` seconds. -1 when the connection was refused or timed out.
int connect_loopback(const std::string& source, int port, double send_timeout);

enum class Sent { all, timed_out, closed };
// Sends `size` bytes; `closed` when the server closed or reset the connection, `timed_out` when it
// stopped reading for the send timeout (what was sent is added to *sent).
Sent send_bytes(int fd, const char* data, size_t size, size_t* sent);

// Waits up to `seconds` for something from the server. Returns the HTTP status of an answer, 0 when
// the server closed without one, -1 when nothing came in time.
int read_status(int fd, double seconds);

// True when the server has sent something or closed (without consuming it).
bool peer_spoke(int fd);

// Closes; with reset, by RST (SO_LINGER 0) as a client that vanishes does.
void close_socket(int fd, bool reset = false);

}  // namespace abuse
