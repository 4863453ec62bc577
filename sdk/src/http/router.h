// The routes: a method and a path pattern (a regular expression matched against the whole path;
// its groups land in request.matches) to a handler. Registered once at start, read-only after.
#pragma once
#include <functional>
#include <regex>
#include <string>
#include <vector>

#include "http/wire/message.h"

namespace flashps::http {

using Handler = std::function<void(const Request&, Response&)>;

class Router {
 public:
  void Get(const std::string& pattern, Handler handler) { add("GET", pattern, std::move(handler)); }
  void Post(const std::string& pattern, Handler handler) { add("POST", pattern, std::move(handler)); }
  void Delete(const std::string& pattern, Handler handler) { add("DELETE", pattern, std::move(handler)); }
  // Runs the handler of the first route matching; false when none does.
  bool route(Request& request, Response& response) const;

 private:
  void add(const std::string& method, const std::string& pattern, Handler handler);
  struct Route {
    std::string method;
    std::regex pattern;
    Handler handler;
  };
  std::vector<Route> routes_;
};

}  // namespace flashps::http
