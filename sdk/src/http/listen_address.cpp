#include "http/listen_address.h"

#include <flashps/flashps.hpp>

#include <arpa/inet.h>

namespace flashps::http {

bool ListenAddress::loopback() const {
  if (host == "localhost") return true;
  in_addr v4{};
  if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;  // 127.0.0.0/8
  in6_addr v6{};
  if (::inet_pton(AF_INET6, host.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;  // other names may resolve anywhere
}

std::string ListenAddress::text() const {
  const std::string shown = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return shown + ":" + std::to_string(port);
}

ListenAddress parse_listen_address(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return sdk::Error(FLASHPS_INVALID_ARGUMENT, "listen address '" + text + "': " + why);
  };
  ListenAddress address;
  std::string port_text;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      throw bad("an IPv6 address is written [address]:port");
    address.host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string::npos) throw bad("expected host:port");
    if (text.find(':') != colon) throw bad("an IPv6 address is written [address]:port");
    address.host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  }
  if (address.host.empty()) address.host = "0.0.0.0";
  if (port_text.empty() || port_text.size() > 5 || port_text.find_first_not_of("0123456789") != std::string::npos)
    throw bad("the port must be a number 0..65535");
  address.port = std::stoi(port_text);
  if (address.port > 65535) throw bad("the port must be a number 0..65535");
  return address;
}

}  // namespace flashps::http
