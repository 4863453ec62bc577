// `flashps bench http`: the cost of serving over HTTP. The same closed-loop stream of edits runs
// through `flashps serve`'s server (OpenAI-compatible POST /v1/images/edits on loopback, once with
// libcurl's client when the build has it and once with cpp-httplib's) and in-process through the
// public engine API (decode the same bytes, submit, wait, encode the same PNG), in rounds of one
// run that rotate the order of the sides. Per HTTP request, the
// overhead is the client's latency minus the server's own decode + edit + encode time (its
// Server-Timing header): what HTTP, multipart, base64 and JSON add.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "core/diagnostics/progress.h"

namespace flashps::bench {

struct HttpBenchmarkOptions {
  std::string model;         // empty: the bundled model
  std::string image, mask;   // PNG/JPEG files; empty: a synthetic 512x512 photo-like JPEG and a
                             // square mask over a quarter of it
  int requests = 48;         // per side
  int clients = 2;           // concurrent closed-loop clients per side
  int steps = 1;
  int rounds = 2;            // rounds over every side, in rotating order (drift cancels out)
  int compute_nice = 10;     // added to the engine's compute threads' nice value, as flashps serve
  ProgressCallback progress;
};

struct HttpBenchmarkReport {
  nlohmann::json results;
  std::string table() const;
};

HttpBenchmarkReport run_http_benchmark(const HttpBenchmarkOptions& options);

}  // namespace flashps::bench
