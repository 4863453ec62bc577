// `--listen host:port`: parsing, and whether the host is loopback (the only place a server may
// listen without API keys).
#pragma once
#include <string>

namespace flashps::http {

struct ListenAddress {
  std::string host;  // without IPv6 brackets
  int port = 0;
  bool loopback() const;
  std::string text() const;  // "127.0.0.1:8188", "[::1]:8188"
};

// "127.0.0.1:8188", "localhost:8188", "[::1]:8188", "0.0.0.0:80", ":8188" (all interfaces).
// Throws sdk::Error(INVALID_ARGUMENT) naming the text.
ListenAddress parse_listen_address(const std::string& text);

}  // namespace flashps::http
