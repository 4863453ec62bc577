// systemd's socket activation (the protocol of sd_listen_fds(3), read without libsystemd): a
// service started by flashps.socket finds LISTEN_PID set to its own pid and LISTEN_FDS to the
// number of sockets passed, the first at fd 3. `flashps serve` then serves on that socket instead
// of binding --listen, so systemd can hold the port (and queue connections) before the model loads.
#pragma once
#include <string>

namespace flashps::cli {

// The listening socket passed to this process, or 0 when none was (no LISTEN_PID, or another
// process's). Unsets LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES, so no child takes them as its own.
// Throws sdk::Error(INVALID_ARGUMENT) when LISTEN_FDS is not 1: serve takes exactly one socket.
int inherited_listen_fd();

// "127.0.0.1:8188" or "[::]:8188": the address a socket is bound to, for the startup line.
std::string bound_address_text(int fd);

}  // namespace flashps::cli
