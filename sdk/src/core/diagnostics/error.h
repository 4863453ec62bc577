// flashps::Error: the exception type the SDK throws for bad input or failed operations.
// Messages name the file (or object) and the problem, so a front end can print them as-is.
// Subclasses say what kind of failure it was, so the C API (sdk/src/api/) can return a precise
// status; code that only reports errors catches Error and needs nothing else.
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

// A caller passed a value the operation cannot take (out of range, wrong shape, NULL, ...).
class InvalidArgumentError : public Error {
 public:
  using Error::Error;
};

// A file, folder, template or capture that does not exist.
class NotFoundError : public Error {
 public:
  using Error::Error;
};

// Reading or writing failed although the request was sound (permissions, full disk, ...).
class IoError : public Error {
 public:
  using Error::Error;
};

// A file exists but its content is malformed (undecodable image, bad JSON, truncated weights).
class CorruptDataError : public Error {
 public:
  using Error::Error;
};

// Valid, but not something this build or model does (an unknown model type, kv replay on UNets).
class UnsupportedError : public Error {
 public:
  using Error::Error;
};

}  // namespace flashps
