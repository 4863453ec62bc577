// flashps::Error: the one exception type the SDK throws for bad input or failed operations.
// Messages name the file (or object) and the problem, so a front end can print them as-is.
#pragma once
#include <stdexcept>
#include <string>

namespace flashps {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thrown when a ProgressSink asked to stop; distinct so callers can report "cancelled", not "failed".
class Cancelled : public Error {
 public:
  Cancelled() : Error("cancelled") {}
};

}  // namespace flashps
