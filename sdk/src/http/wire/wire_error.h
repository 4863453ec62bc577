// A request the wire layer refuses: the status to answer and a message naming the limit or the
// malformed part. The server turns it into the one JSON error shape and closes the connection.
#pragma once
#include <string>

namespace flashps::http {

struct WireError {
  int status = 400;
  std::string message;
  std::string code;  // the error shape's code ("header_too_large", ...); may be empty
};

}  // namespace flashps::http
