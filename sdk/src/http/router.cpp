#include "http/router.h"

namespace flashps::http {

void Router::add(const std::string& method, const std::string& pattern, Handler handler) {
  routes_.push_back({method, std::regex(pattern), std::move(handler)});
}

bool Router::route(Request& request, Response& response) const {
  // A HEAD is answered as its GET, without the body (the writer drops it).
  const std::string method = request.method == "HEAD" ? "GET" : request.method;
  for (const Route& route : routes_) {
    if (route.method != method || !std::regex_match(request.path, request.matches, route.pattern)) continue;
    route.handler(request, response);
    return true;
  }
  return false;
}

}  // namespace flashps::http
