// Runs a batch manifest through the Engine: resumes by skipping items whose output exists,
// writes each output atomically (a crash never leaves a half-written file that a resume would
// skip), records per-item failures without stopping, and summarises.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "serve/batch_manifest.h"
#include "serve/engine.h"

namespace flashps::serve {

struct BatchProgress {
  int total = 0, done = 0, failed = 0, skipped = 0, in_flight = 0;
  double seconds = 0;
};

struct BatchRunOptions {
  bool resume = true;         // skip items whose output file exists
  size_t max_in_flight = 32;  // submitted and not yet resolved
  bool model_takes_text = false;  // the model encodes "prompt" (Stable Diffusion folders)
  // Called as items resolve; returning false cancels what is left.
  std::function<bool(const BatchProgress&)> progress;
};

struct BatchItemOutcome {
  int line = 0;
  std::string output;
  std::string status;  // done | skipped | failed | cancelled
  std::string error;
  bool cache_hit = false;
  double seconds = 0;  // submission to result
};

struct BatchSummary {
  int total = 0, done = 0, skipped = 0, failed = 0, cancelled = 0, cache_hits = 0;
  double seconds = 0;
  double throughput = 0;  // done items per second
  std::vector<BatchItemOutcome> items;  // in manifest order
  std::vector<std::string> notes;
};

BatchSummary run_batch(Engine& engine, const BatchManifest& manifest, const BatchRunOptions& options);

// The per-item results as JSON (`flashps batch --json`, the C API's json_report_path): done,
// skipped, failed, cancelled, cache_hits, seconds, throughput and items [line, output, status,
// error, cache_hit, seconds]. Written atomically; IoError naming the path.
void write_batch_report(const BatchSummary& summary, const std::string& path);

}  // namespace flashps::serve
